import { utcMinute } from '@meridian/time';
import { networkByKey } from '@meridian/networks';

const numberFormat = new Intl.NumberFormat('en-US');

export const formatNumber = (value: number | string | null | undefined): string =>
  value === null || value === undefined ? '—' : numberFormat.format(Number(value));

export function formatCu(value: number | string | null | undefined): string {
  return `${formatNumber(value)} CU`;
}

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  return utcMinute(iso);
}

/** To the second: attempts of one event are seconds apart. */
export function formatDateTimeSeconds(iso: string | null | undefined): string {
  if (!iso) return '—';
  return `${new Date(iso).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

export function formatRelative(iso: string, now = Date.now()): string {
  const ms = new Date(iso).getTime() - now;
  const abs = Math.abs(ms);
  const unit =
    abs < 90_000
      ? `${Math.round(abs / 1000)} s`
      : abs < 90 * 60_000
        ? `${Math.round(abs / 60_000)} min`
        : abs < 36 * 3_600_000
          ? `${Math.round(abs / 3_600_000)} h`
          : `${Math.round(abs / 86_400_000)} days`;
  return ms >= 0 ? `in ${unit}` : `${unit} ago`;
}

export const PLAN_NAMES: Record<string, string> = {
  free: 'Free',
  starter: 'Starter',
  growth: 'Growth',
  advanced: 'Advanced',
  scale: 'Scale',
  pro: 'Pro',
  premium: 'Premium',
  enterprise: 'Enterprise',
};

export const planName = (plan: string | null | undefined) =>
  plan ? (PLAN_NAMES[plan] ?? plan) : 'No plan';

/**
 * A network as the customer reads it, everywhere (QA: "Polygon PoS Mainnet" on Node access,
 * `polygon-mainnet` in usage and webhooks): the networks table's display name; webhook
 * deliveries (billing's usage network `webhooks`) by what they are; a key the table lacks as is.
 */
export const networkLabel = (network: string | undefined): string =>
  network === 'webhooks'
    ? 'Webhook deliveries'
    : network === undefined
      ? ''
      : (networkByKey(network)?.displayName ?? network);
