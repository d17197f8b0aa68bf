import { useId, type ReactElement, type ReactNode, cloneElement } from 'react';

/** A labelled control with its hint and its error message, wired with aria attributes. */
export function Field(props: {
  label: string;
  hint?: string;
  error?: string;
  children: ReactElement<Record<string, unknown>>;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [props.hint ? hintId : '', props.error ? errorId : '']
    .filter(Boolean)
    .join(' ');
  return (
    <div className={`field ${props.error ? 'field-invalid' : ''}`}>
      <label htmlFor={id}>{props.label}</label>
      {cloneElement(props.children, {
        id,
        'aria-invalid': props.error ? true : undefined,
        'aria-describedby': describedBy || undefined,
      })}
      {props.hint && (
        <p id={hintId} className="hint">
          {props.hint}
        </p>
      )}
      {props.error && (
        <p id={errorId} className="field-error">
          {props.error}
        </p>
      )}
    </div>
  );
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
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [props.hint ? hintId : '', props.error ? errorId : '']
    .filter(Boolean)
    .join(' ');
  return (
    <fieldset
      className={`fieldset ${props.error ? 'field-invalid' : ''}`}
      aria-invalid={props.error ? true : undefined}
      aria-describedby={describedBy || undefined}
      tabIndex={props.error ? -1 : undefined}
      data-testid={props.testId}
    >
      <legend>{props.legend}</legend>
      {props.children}
      {props.hint && (
        <p id={hintId} className="hint">
          {props.hint}
        </p>
      )}
      {props.error && (
        <p id={errorId} className="field-error">
          {props.error}
        </p>
      )}
    </fieldset>
  );
}
