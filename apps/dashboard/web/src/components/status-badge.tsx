import type { Webhook } from '../types';
import { Badge } from './ui';

/** The API's own label (spec dashboard column); the status only picks the colour. */
export function StatusBadge(props: { webhook: Pick<Webhook, 'status' | 'status_label'> }) {
  const tone =
    props.webhook.status === 'active'
      ? 'ok'
      : props.webhook.status === 'paused'
        ? 'neutral'
        : 'warn';
  return (
    <span data-testid="status-label">
      <Badge tone={tone}>{props.webhook.status_label}</Badge>
    </span>
  );
}
