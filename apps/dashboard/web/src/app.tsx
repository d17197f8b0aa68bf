import { Navigate, Route, Routes } from 'react-router-dom';
import { Layout } from './components/layout';
import { Loading, NotFound } from './components/ui';
import { AddressAuditPage } from './pages/address-audit';
import { AddressListsPage } from './pages/address-lists';
import { ApiKeysPage } from './pages/api-keys';
import { NodeAccessPage } from './pages/node-access';
import { OperatorAccountPage } from './pages/operator-account';
import { OperatorAccountsPage } from './pages/operator-accounts';
import { OperatorSettingsPage } from './pages/operator-settings';
import { OverviewPage } from './pages/overview';
import { PlanPage } from './pages/plan';
import { SettingsPage } from './pages/settings';
import { TeamPage } from './pages/team';
import { SignInPage, SignUpPage } from './pages/sign-in';
import { TopUpPage } from './pages/top-up';
import { WebhookDetailPage } from './pages/webhook-detail';
import { WebhookFormPage } from './pages/webhook-form';
import { WebhooksPage } from './pages/webhooks';
import { SessionProvider } from './session';

export function App() {
  return (
    <SessionProvider fallback={<Loading label="Loading the dashboard…" />}>
      {(session) => {
        if (!session.signed_in)
          return (
            <Routes>
              <Route path="/sign-up" element={<SignUpPage />} />
              <Route path="*" element={<SignInPage />} />
            </Routes>
          );
        if (session.user?.role === 'operator')
          return (
            <Layout>
              <Routes>
                <Route path="/operator/accounts" element={<OperatorAccountsPage />} />
                <Route path="/operator/accounts/:id" element={<OperatorAccountPage />} />
                <Route path="/operator/settings" element={<OperatorSettingsPage />} />
                <Route path="/settings" element={<SettingsPage />} />
                <Route path="/" element={<Navigate to="/operator/accounts" replace />} />
                <Route path="/sign-up" element={<Navigate to="/operator/accounts" replace />} />
                <Route path="/sign-in" element={<Navigate to="/operator/accounts" replace />} />
                <Route
                  path="*"
                  element={<NotFound home="/operator/accounts" homeLabel="Go to Accounts" />}
                />
              </Routes>
            </Layout>
          );
        return (
          <Layout>
            <Routes>
              <Route path="/" element={<OverviewPage />} />
              <Route path="/api-keys" element={<ApiKeysPage />} />
              <Route path="/node-access" element={<NodeAccessPage />} />
              <Route path="/address-audit" element={<AddressAuditPage />} />
              <Route path="/webhooks" element={<WebhooksPage />} />
              <Route path="/webhooks/new" element={<WebhookFormPage />} />
              <Route path="/webhooks/:id" element={<WebhookDetailPage />} />
              <Route path="/webhooks/:id/edit" element={<WebhookFormPage />} />
              <Route path="/address-lists" element={<AddressListsPage />} />
              <Route path="/plan" element={<PlanPage />} />
              <Route path="/top-up" element={<TopUpPage />} />
              <Route path="/team" element={<TeamPage />} />
              <Route path="/settings" element={<SettingsPage />} />
              {/* Just signed up or in (QA: `/sign-in` said "Page not found"): the form's address
                  leads on to the overview. */}
              <Route path="/sign-up" element={<Navigate to="/" replace />} />
              <Route path="/sign-in" element={<Navigate to="/" replace />} />
              <Route path="*" element={<NotFound home="/" homeLabel="Go to Overview" />} />
            </Routes>
          </Layout>
        );
      }}
    </SessionProvider>
  );
}
