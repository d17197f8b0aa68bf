import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ApiError } from './api';
import { SubmissionKeys } from './submission-keys';

/** The error of a submission its form's own check stopped: every problem, under its field. */
export const checkedError = (fields: Record<string, string>) =>
  new ApiError(0, 'form_invalid', 'Check the fields marked below.', fields, {});

/**
 * After a refused submission, the focus goes to the form's first invalid field (GOV.UK, Primer):
 * `Field` marks it `aria-invalid` and describes it by its message, so a screen reader reads the
 * label and what is wrong. Nothing marked (the error is the form's notice, a `role="alert"`):
 * the focus stays where it is. `form`: the form submitted (the submit event's), none: no move.
 * True when it moved the focus.
 */
export function focusFirstInvalid(form: Element | null): boolean {
  const invalid = form?.querySelector<HTMLElement>('[aria-invalid="true"]');
  invalid?.focus();
  return invalid !== null && invalid !== undefined;
}

/**
 * A form's submission: `submit` sends `values` once at a time (a press while one is in flight
 * sends nothing, and `pending` turns true in the same event, so the button is disabled before a
 * second click lands), with the Idempotency-Key of this submission (`SubmissionKeys`: kept until
 * the values change or it succeeds). Every form that creates something, money above all, goes
 * through it; `send` puts the key in the `idempotency-key` header where the API takes one.
 */
export function useSubmission<T, V>(options: {
  values: V;
  send: (values: V, idempotencyKey: string) => Promise<T>;
  onSuccess?: (data: T, values: V) => void;
  /**
   * The form's own checks (required fields, obvious formats): each problem by the API's name of
   * its field. Any at all and nothing is sent; they are the submission's error, all at once.
   */
  check?: (values: V) => Record<string, string>;
}) {
  const keys = useRef<SubmissionKeys | null>(null);
  keys.current ??= new SubmissionKeys();
  const [busy, setBusy] = useState(false);
  const [checked, setChecked] = useState<ApiError | null>(null);
  // Counts the refusals (the form's own checks or the API's): each one, rendered, moves the
  // focus (focusFirstInvalid), a second refusal of the same fields too.
  const [refusals, setRefusals] = useState(0);
  const form = useRef<Element | null>(null);
  useEffect(() => {
    if (refusals > 0) focusFirstInvalid(form.current);
  }, [refusals]);
  const mutation = useMutation<T, Error, { values: V; key: string }>({
    mutationFn: ({ values, key }) => options.send(values, key),
    onSuccess: (data, { values }) => {
      keys.current!.settled(true);
      setBusy(false);
      options.onSuccess?.(data, values);
    },
    onError: () => {
      keys.current!.settled(false);
      setBusy(false);
      setRefusals((n) => n + 1);
    },
  });
  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    const target = event?.currentTarget as Element | undefined;
    form.current = target ? (target.closest('form') ?? target) : null;
    const problems = options.check?.(options.values) ?? {};
    if (Object.keys(problems).length > 0) {
      setChecked(checkedError(problems));
      setRefusals((n) => n + 1);
      return;
    }
    setChecked(null);
    const key = keys.current!.begin(JSON.stringify(options.values));
    if (key === undefined) return;
    setBusy(true);
    mutation.mutate({ values: options.values, key });
  };
  return {
    submit,
    pending: busy || mutation.isPending,
    error: busy ? null : (checked ?? mutation.error),
    data: mutation.data,
    succeeded: !busy && !checked && mutation.isSuccess,
    reset: mutation.reset,
  };
}
