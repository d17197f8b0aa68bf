import { Link } from 'react-router-dom';
import { ApiError } from '../api';
import { capMessage, isCapError } from '../cap-errors';
import { Notice } from './ui';

/** A plan-limit refusal in words, with the way to the plan's limits (the Webhooks page). */
export function CapNotice(props: { error: ApiError }) {
  return (
    <Notice tone="bad">
      <span data-testid="cap-message">
        {capMessage(props.error.code, props.error.body, props.error.message)}
      </span>{' '}
      <Link to="/webhooks">See your plan&apos;s limits</Link>.
    </Notice>
  );
}

/** An API refusal as a notice: a plan limit in words, anything else as the API said it. */
export function ApiErrorNotice(props: { error: unknown }) {
  if (props.error instanceof ApiError && isCapError(props.error.code))
    return <CapNotice error={props.error} />;
  const message = props.error instanceof Error ? props.error.message : 'something went wrong';
  return <Notice tone="bad">{message}</Notice>;
}
