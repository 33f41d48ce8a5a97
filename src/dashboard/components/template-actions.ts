import type { Template } from '../api.js';
import { api } from '../api.js';
import { navigate } from '../router.js';
import { toast } from './toasts.js';
import { errorMessage } from './ui.js';

/** Copies the template and opens the copy in the editor; a failure is a toast. */
export async function duplicateAndOpen(template: Template): Promise<void> {
  try {
    const copy = await api.duplicateTemplate(template.id);
    toast(`Created ${copy.name}`);
    navigate(`/templates/${encodeURIComponent(copy.id)}`);
  } catch (error) {
    toast(`Could not duplicate: ${errorMessage(error)}`, 'error');
  }
}
