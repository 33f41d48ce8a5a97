// What one built-in template is; the templates themselves are in default-templates-<language>.ts.
import type { TemplateType } from './templates.schemas.js';

export interface DefaultTemplate {
  name: string;
  type: TemplateType;
  /** ISO 639-1, lower case. */
  language: string;
  subject: string;
  body: string;
}

/** Paragraphs joined by a blank line. */
export const body = (...paragraphs: string[]): string => paragraphs.join('\n\n');
