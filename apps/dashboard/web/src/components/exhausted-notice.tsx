import { Link } from 'react-router-dom';
import { exhaustedPageNotice } from '../balance-words';
import { useAccount } from '../pages/overview';
import { Notice } from './ui';

/**
 * The one notice of an exhausted balance on the pages of what it stops (Webhooks, a webhook's
 * page, Node access; the Overview says it beside its badge): QA read "Active" there at zero
 * balance with nothing saying deliveries were held and calls refused. Nothing while it is ok.
 */
export function ExhaustedNotice() {
  const account = useAccount();
  const a = account.data;
  if (!a || a.balance.state !== 'exhausted') return null;
  return (
    <Notice tone="bad">
      <span data-testid="exhausted-page-notice">{exhaustedPageNotice(a.balance, a.plan)}</span>{' '}
      <Link to="/top-up">Top up</Link>
    </Notice>
  );
}
