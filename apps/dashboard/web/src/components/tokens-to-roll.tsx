import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api, relay } from '../api';
import { formatDateTime } from '../format';
import { SecretOnce } from './copy-button';
import { Card, Notice } from './ui';

/** An access token a removed member made or rolled recently (`DELETE /api/team/members/{id}`). */
export interface TokenToRoll {
  id: string;
  name: string | null;
  network: string | null;
  hint: string | null;
  change: 'created' | 'rolled';
  at: string;
}

/**
 * After a removal (ADR 0604 amendment): the access tokens the member made or rolled recently,
 * which keep working because the account's apps may use them, each offered for a roll; a rolled
 * one shows its new token once and leaves the list.
 */
export function TokensToRoll(props: { email: string; tokens: TokenToRoll[] }) {
  const [left, setLeft] = useState(props.tokens);
  const [fresh, setFresh] = useState<{ name: string; token: string } | undefined>();
  const roll = useMutation({
    mutationFn: (token: TokenToRoll) =>
      api<{ id: string; name: string; token: string }>(
        'POST',
        relay('billing', `/access-tokens/${token.id}/roll`),
      ),
    onSuccess: (rolled, token) => {
      setLeft((tokens) => tokens.filter((t) => t.id !== token.id));
      setFresh({ name: rolled.name, token: rolled.token });
    },
  });
  return (
    <Card title="Access tokens to roll">
      <p>
        {props.email} made or rolled these access tokens in the last 30 days, so they may have kept
        a copy. They still work, since your apps may use them: roll each one {props.email} may have
        kept, then put the new token in the apps that use it.
      </p>
      {left.length > 0 && (
        <table className="table table-stack" data-testid="tokens-to-roll">
          <thead>
            <tr>
              <th scope="col">Token</th>
              <th scope="col">Network</th>
              <th scope="col">What they did</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {left.map((t) => (
              <tr key={t.id}>
                <td data-label="Token">
                  {t.name ?? t.id} {t.hint && <code>{t.hint}</code>}
                </td>
                <td data-label="Network">{t.network ?? '—'}</td>
                <td data-label="What they did">
                  {t.change === 'created' ? 'made' : 'rolled'} {formatDateTime(t.at)}
                </td>
                <td className="num">
                  <button
                    type="button"
                    className="button button-small"
                    disabled={roll.isPending}
                    onClick={() => roll.mutate(t)}
                  >
                    Roll<span className="visually-hidden"> token {t.name ?? t.id}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {roll.error && <Notice tone="bad">{roll.error.message}</Notice>}
      {fresh && (
        <SecretOnce
          label={`New token for ${fresh.name}`}
          value={fresh.token}
          onDone={() => setFresh(undefined)}
        />
      )}
    </Card>
  );
}
