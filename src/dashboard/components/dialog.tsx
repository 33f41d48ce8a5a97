import { createPortal, type ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { Button, ErrorBox } from './ui.js';
import { IconClose } from './icons.js';

/**
 * A modal on the native <dialog>: the browser traps focus, closes on Escape and returns focus to
 * where it was. Rendered only while open, into the body, so the styles of the place that opened
 * it (a table cell, a toolbar) never leak into it.
 */
export function Dialog({
  title,
  onClose,
  children,
  footer,
  size = 'md',
}: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  footer?: ComponentChildren;
  size?: 'sm' | 'md';
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const headingId = useId();
  useEffect(() => {
    const dialog = ref.current;
    // The control that opened the dialog gets the focus back, even when the page re-rendered
    // meanwhile (the browser's own return goes to <body> once the dialog leaves the DOM).
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      dialog?.close();
      requestAnimationFrame(() => {
        if (opener?.isConnected && (document.activeElement === document.body || document.activeElement === null))
          opener.focus();
      });
    };
  }, []);
  return createPortal(
    <dialog
      ref={ref}
      class={`dialog dialog-${size}`}
      aria-labelledby={headingId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
      onClick={(event) => {
        // A click on the backdrop (the dialog element itself, outside its panel) closes it.
        if (event.target === ref.current) onClose();
      }}
    >
      <div class="dialog-panel">
        <header class="dialog-header">
          <h2 id={headingId}>{title}</h2>
          <button type="button" class="icon-button" aria-label="Close" onClick={onClose}>
            <IconClose size={18} />
          </button>
        </header>
        <div class="dialog-body">{children}</div>
        {footer && <footer class="dialog-footer">{footer}</footer>}
      </div>
    </dialog>,
    document.body,
  );
}

/** Asks before something that cannot be undone; shows the server's error in place if it fails. */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  onConfirm,
  onClose,
}: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  return (
    <Dialog
      title={title}
      size="sm"
      onClose={onClose}
      footer={
        <>
          <Button variant="ghost" onClick={onClose} disabled={busy}>
            Cancel
          </Button>
          <Button
            variant="danger"
            loading={busy}
            onClick={async () => {
              setBusy(true);
              setError(undefined);
              try {
                await onConfirm();
              } catch (failure) {
                setError(failure);
                setBusy(false);
              }
            }}
          >
            {confirmLabel}
          </Button>
        </>
      }
    >
      <div class="confirm-text">{children}</div>
      {error !== undefined && <ErrorBox error={error} title="That did not work" />}
    </Dialog>
  );
}
