import { useEffect, useId, useRef, type ReactNode } from 'react';

/** A modal confirmation on the native <dialog> (focus trap, Escape to cancel for free). */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  busy?: boolean;
  /**
   * Why the action failed, said inside the dialog: a modal hides the page from a screen reader,
   * so a notice behind it is never reached.
   */
  error?: ReactNode;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  // One page may hold several dialogs (address lists: replace and delete): ids must differ.
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onCancel={props.onCancel}>
      <h2 id={titleId}>{props.title}</h2>
      <div className="dialog-body">{props.children}</div>
      {props.error && (
        <div className="notice notice-bad" role="alert" data-testid="dialog-error">
          {props.error}
        </div>
      )}
      <div className="dialog-actions">
        <button type="button" className="button button-secondary" onClick={props.onCancel}>
          Cancel
        </button>
        <button
          type="button"
          className={`button ${props.danger ? 'button-danger' : ''}`}
          disabled={props.busy}
          onClick={props.onConfirm}
        >
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
