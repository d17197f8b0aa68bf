import { useId, type ReactElement, type ReactNode, cloneElement } from 'react';

/** A labelled control with its hint and its error message, wired with aria attributes. */
export function Field(props: {
  label: string;
  hint?: string;
  error?: string;
  children: ReactElement<Record<string, unknown>>;
}) {
  const { id, describedBy, messages } = useMessages(props.hint, props.error);
  return (
    <div className={`field ${props.error ? 'field-invalid' : ''}`}>
      <label htmlFor={id}>{props.label}</label>
      {cloneElement(props.children, {
        id,
        'aria-invalid': props.error ? true : undefined,
        'aria-describedby': describedBy,
      })}
      {messages}
    </div>
  );
}

/**
 * A hint and an error message under a control or a group, with the ids that describe it: one
 * wiring for `Field` and `FieldSet`.
 */
function useMessages(hint: string | undefined, error: string | undefined) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [hint ? hintId : '', error ? errorId : ''].filter(Boolean).join(' ');
  const messages = (
    <>
      {hint && (
        <p id={hintId} className="hint">
          {hint}
        </p>
      )}
      {error && (
        <p id={errorId} className="field-error">
          {error}
        </p>
      )}
    </>
  );
  return { id, describedBy: describedBy || undefined, messages };
}

/**
 * A group of controls (checkboxes, radios) under a legend, with its hint and error message wired
 * as `Field`'s are (QA: an API's refusal of the API key's scopes marked nothing): invalid, the
 * fieldset is `aria-invalid` and described by its message, and takes the focus of
 * `focusFirstInvalid` (`tabIndex` -1: a screen reader reads the legend and what is wrong), as a
 * `Field`'s control does.
 */
export function FieldSet(props: {
  legend: string;
  hint?: string;
  error?: string;
  testId?: string;
  children: ReactNode;
}) {
  const { describedBy, messages } = useMessages(props.hint, props.error);
  return (
    <fieldset
      className={`fieldset ${props.error ? 'field-invalid' : ''}`}
      aria-invalid={props.error ? true : undefined}
      aria-describedby={describedBy}
      tabIndex={props.error ? -1 : undefined}
      data-testid={props.testId}
    >
      <legend>{props.legend}</legend>
      {props.children}
      {messages}
    </fieldset>
  );
}
