/**
 * A change to one webhook at the version the page shows (ADR 0404; QA QQ): Save (PATCH), Pause,
 * Resume and Delete send `If-Match: "<version>"`, so webhook-matcher refuses a change to a
 * webhook a colleague changed since (412 `version_mismatch`) instead of acting on what the user
 * has not seen. On that refusal the webhook is asked again at once, so the page can show what
 * changed (components/webhook-conflict.tsx) and act again on the current version by choice.
 */
import type { QueryClient } from '@tanstack/react-query';
import { api, ApiError, relay } from './api';
import type { Webhook } from './types';
import { ifMatch, isVersionMismatch } from './webhook-edit';

export type VersionedChange = 'save' | 'pause' | 'resume' | 'delete';

/** The request each change makes: the webhook's own route or one of its action routes. */
const ROUTES: Record<VersionedChange, { method: string; suffix: string }> = {
  save: { method: 'PATCH', suffix: '' },
  pause: { method: 'POST', suffix: '/pause' },
  resume: { method: 'POST', suffix: '/resume' },
  delete: { method: 'DELETE', suffix: '' },
};

/**
 * Sends `change` to webhook `id` only if it is still at `version`; the answer is the webhook as
 * changed (status `deleted` for a delete). A 412 is thrown on as it came, after asking for the
 * webhook again (its query key `['webhook', id]`).
 */
export async function changeAtVersion(
  client: QueryClient,
  change: VersionedChange,
  id: string,
  version: number,
  body?: Record<string, unknown>,
): Promise<Webhook> {
  const { method, suffix } = ROUTES[change];
  try {
    return await api<Webhook>(method, relay('webhooks', `/webhooks/${id}${suffix}`), body, {
      'if-match': ifMatch(version),
    });
  } catch (error) {
    if (error instanceof ApiError && isVersionMismatch(error))
      void client.invalidateQueries({ queryKey: ['webhook', id] });
    throw error;
  }
}
