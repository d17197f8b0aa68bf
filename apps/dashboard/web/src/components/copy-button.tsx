import { useEffect, useRef, useState } from 'react';

/** Copies `value`; says so for a moment (and to screen readers). */
export function CopyButton(props: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.value);
    } catch {
      // No clipboard permission (plain http, old browser): select the text for a manual copy.
      const area = document.createElement('textarea');
      area.value = props.value;
      document.body.appendChild(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <button
      type="button"
      className="button button-small button-secondary"
      onClick={() => void copy()}
      // The name starts with what the button shows (WCAG 2.5.3), "Copied" included.
      aria-label={copied ? `Copied: ${props.label}` : props.label}
    >
      <span aria-live="polite">{copied ? 'Copied' : 'Copy'}</span>
    </button>
  );
}

/**
 * A secret shown once: the value, a copy button and the warning that it will not show again.
 * `takeFocus`: shown by the user's own action (Create), the copy button takes the focus, so a
 * keyboard or screen reader user lands on what to do next, not on the page's body.
 */
export function SecretOnce(props: {
  label: string;
  value: string;
  onDone?: () => void;
  takeFocus?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  const { takeFocus } = props;
  useEffect(() => {
    if (takeFocus) box.current?.querySelector<HTMLElement>('.copy-row button')?.focus();
  }, [takeFocus]);
  return (
    <div className="secret-once" role="status" ref={box}>
      <p>
        <strong>{props.label}</strong> — copy it now: it is shown only this once and won&apos;t be
        shown again.
      </p>
      <div className="copy-row">
        <code className="secret-value" data-testid="secret-value">
          {props.value}
        </code>
        <CopyButton value={props.value} label={`Copy ${props.label}`} />
      </div>
      {props.onDone && (
        <button
          type="button"
          className="button button-secondary button-small"
          onClick={props.onDone}
        >
          Done
        </button>
      )}
    </div>
  );
}
