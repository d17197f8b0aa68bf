import { useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { readCuAmount } from '../amount';
import { formatCu, formatNumber } from '../format';
import { placeErrors } from '../form-errors';
import { focusFirstInvalid, useSubmission } from '../use-submission';
import { ConfirmDialog } from './confirm-dialog';
import { Field } from './field';
import { Notice } from './ui';

/**
 * An amount of CU to buy or credit (Top up, the operator's Credit): the amount is read exactly
 * or refused under the field (amount.ts), the amount read is shown under the field, and nothing
 * is sent before a confirmation naming it. Sent once per submission (useSubmission: the
 * Idempotency-Key, a double click on Confirm sends one request).
 */
export function CuAmountForm<T>(props: {
  initial: number;
  submitLabel: string;
  hint: string;
  presets?: number[];
  className?: string;
  confirmTitle: (cu: number) => string;
  confirmBody: (cu: number) => ReactNode;
  confirmLabel: (cu: number) => string;
  send: (body: { cu: number }, idempotencyKey: string) => Promise<T>;
  onSuccess?: (data: T) => void;
  succeeded: (data: T) => ReactNode;
}) {
  const [text, setText] = useState(formatNumber(props.initial));
  const [touched, setTouched] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [sent, setSent] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const reading = readCuAmount(text);
  const submission = useSubmission({
    values: { cu: reading.ok ? reading.cu : 0 },
    send: props.send,
    onSuccess: (data) => props.onSuccess?.(data),
  });
  const form = useRef<HTMLFormElement>(null);
  const refusal = useRef<HTMLDivElement>(null);
  // Counts the API's refusals of a confirmed amount: each one, rendered, moves the focus.
  const [refusals, setRefusals] = useState(0);
  const failed = submission.error !== null && submission.error !== undefined;
  // The dialog stays open (its Confirm disabled) while the request is in flight, then closes.
  useEffect(() => {
    if (sent && !submission.pending) {
      setSent(false);
      setConfirming(false);
      if (failed) setRefusals((n) => n + 1);
    }
  }, [sent, submission.pending, failed]);
  // Confirm was pressed in the dialog, which gives the focus back to the form's button as it
  // closes (its effect runs before this one): a refusal then moves it as the other forms' do,
  // to the amount it names (`focusFirstInvalid`), else to the refusal's notice (QA: the focus
  // stayed on the button, the refusal unread by keyboard).
  useEffect(() => {
    if (refusals > 0 && !focusFirstInvalid(form.current)) refusal.current?.focus();
  }, [refusals]);
  const errors = placeErrors(submission.error, { cu: ['cu'] });
  const localError = touched && !reading.ok ? reading.message : undefined;
  const ask = (event: FormEvent) => {
    event.preventDefault();
    setTouched(true);
    if (!reading.ok) {
      input.current?.focus();
      return;
    }
    setConfirming(true);
  };
  const confirm = () => {
    if (!reading.ok) return;
    setSent(true);
    submission.submit();
  };
  return (
    <>
      <form ref={form} onSubmit={ask} className={props.className} noValidate>
        <Field
          label="Compute units"
          hint={`${reading.ok ? `Reads as ${formatCu(reading.cu)}. ` : ''}${props.hint}`}
          error={localError ?? errors.fields.cu}
        >
          <input
            ref={input}
            inputMode="numeric"
            autoComplete="off"
            value={text}
            onChange={(e) => {
              setText(e.target.value);
              setTouched(true);
            }}
          />
        </Field>
        {props.presets && (
          <div className="preset-row" role="group" aria-label="Amount presets">
            {props.presets.map((p) => (
              <button
                key={p}
                type="button"
                className="button button-secondary button-small"
                onClick={() => setText(formatNumber(p))}
              >
                {formatCu(p)}
              </button>
            ))}
          </div>
        )}
        <button type="submit" className="button" disabled={submission.pending}>
          {props.submitLabel}
        </button>
      </form>
      {reading.ok && (
        <ConfirmDialog
          open={confirming}
          title={props.confirmTitle(reading.cu)}
          confirmLabel={props.confirmLabel(reading.cu)}
          busy={submission.pending}
          onConfirm={confirm}
          onCancel={() => {
            if (!submission.pending) setConfirming(false);
          }}
        >
          {props.confirmBody(reading.cu)}
        </ConfirmDialog>
      )}
      {submission.succeeded && submission.data && props.succeeded(submission.data)}
      {errors.notice && (
        <div ref={refusal} tabIndex={-1} data-testid="amount-refusal">
          <Notice tone="bad">{errors.notice}</Notice>
        </div>
      )}
    </>
  );
}
