import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router-dom';
import { api, relay } from '../api';
import { startSteps } from '../getting-started';
import type { AccessToken, Page } from '../types';
import { useWebhooks } from '../pages/webhooks';
import { Card } from './ui';

/** "Get started" on the overview until the account has an access token and a webhook. */
export function GetStarted() {
  const tokens = useQuery({
    queryKey: ['access-tokens'],
    queryFn: () => api<Page<AccessToken>>('GET', relay('billing', '/access-tokens?limit=200')),
  });
  const webhooks = useWebhooks();
  if (!tokens.data || !webhooks.data) return null;
  const steps = startSteps({
    tokens: tokens.data.items.length,
    webhooks: webhooks.data.items.length,
  });
  if (!steps) return null;
  return (
    <Card title="Get started">
      <ol className="start-steps" data-testid="get-started">
        {steps.map((step) => (
          <li key={step.id} className={step.done ? 'start-done' : undefined}>
            {step.done ? (
              <>
                <span className="visually-hidden">Done: </span>
                {step.label}
              </>
            ) : (
              <Link to={step.to}>{step.label}</Link>
            )}
          </li>
        ))}
      </ol>
    </Card>
  );
}
