import { useEffect, useState } from 'preact/hooks';
import { IconAlert, IconCheck } from './icons.js';

interface Toast {
  id: number;
  message: string;
  tone: 'success' | 'error';
}

let nextId = 1;
let toasts: Toast[] = [];
const listeners = new Set<(toasts: Toast[]) => void>();

function publish(): void {
  for (const listener of listeners) listener(toasts);
}

/** A short confirmation ("Mailbox paused") that disappears by itself. */
export function toast(message: string, tone: Toast['tone'] = 'success'): void {
  const id = nextId++;
  toasts = [...toasts, { id, message, tone }];
  publish();
  setTimeout(
    () => {
      toasts = toasts.filter((t) => t.id !== id);
      publish();
    },
    tone === 'error' ? 8000 : 4000,
  );
}

/** The live region every toast is announced through. */
export function Toasts() {
  const [shown, setShown] = useState<Toast[]>(toasts);
  useEffect(() => {
    listeners.add(setShown);
    return () => {
      listeners.delete(setShown);
    };
  }, []);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {shown.map((t) => (
        <div key={t.id} class={`toast toast-${t.tone}`}>
          {t.tone === 'success' ? <IconCheck size={16} /> : <IconAlert size={16} />}
          <span>{t.message}</span>
        </div>
      ))}
    </div>
  );
}
