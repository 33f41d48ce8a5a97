import type { ComponentChildren } from 'preact';
import { useCanEdit } from '../access.js';

/** Shows its children to members and above: a viewer sees no button the API would refuse. */
export function Editable({ children }: { children: ComponentChildren }) {
  return useCanEdit() ? <>{children}</> : null;
}
