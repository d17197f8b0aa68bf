/**
 * The overview's first steps (QA: a first overview pointed nowhere): an access token, then a
 * webhook, each done once the account has one. Shown until both are done.
 */
export interface StartStep {
  id: 'token' | 'webhook';
  label: string;
  to: string;
  done: boolean;
}

export function startSteps(counts: { tokens: number; webhooks: number }): StartStep[] | undefined {
  const steps: StartStep[] = [
    {
      id: 'token',
      label: 'Create your first access token and send a JSON-RPC call',
      to: '/node-access',
      done: counts.tokens > 0,
    },
    {
      id: 'webhook',
      label: 'Create your first webhook to hear of an address’s activity',
      to: '/webhooks/new',
      done: counts.webhooks > 0,
    },
  ];
  return steps.every((s) => s.done) ? undefined : steps;
}
