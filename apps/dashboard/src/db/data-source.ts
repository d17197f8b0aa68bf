import type { AppDataSourceOptions } from '@meridian/platform-db';
import { DashboardInitial1764000000000 } from '../migrations/1764000000000-dashboard-initial';
import { DashboardTeams1764100000000 } from '../migrations/1764100000000-dashboard-teams';
import { DashboardSignUpRequests1764200000000 } from '../migrations/1764200000000-dashboard-sign-up-requests';
import { DashboardAccessTokenChanges1764350000000 } from '../migrations/1764350000000-dashboard-access-token-changes';
import { DashboardCustomerOwnerByDefault1764400000000 } from '../migrations/1764400000000-dashboard-customer-owner-by-default';
import { DashboardOnePendingInvitation1764500000000 } from '../migrations/1764500000000-dashboard-one-pending-invitation';
import { DashboardOperatorInvitations1764600000000 } from '../migrations/1764600000000-dashboard-operator-invitations';
import { DashboardInvitationIdDefault1764700000000 } from '../migrations/1764700000000-dashboard-invitation-id-default';

/** The Postgres schema this app owns; no other app reads or writes it. */
export const SCHEMA = 'dashboard';

export function dataSourceOptions(url: string): AppDataSourceOptions {
  return {
    url,
    schema: SCHEMA,
    entities: [],
    migrations: [
      DashboardInitial1764000000000,
      DashboardTeams1764100000000,
      DashboardSignUpRequests1764200000000,
      DashboardAccessTokenChanges1764350000000,
      DashboardCustomerOwnerByDefault1764400000000,
      DashboardOnePendingInvitation1764500000000,
      DashboardOperatorInvitations1764600000000,
      DashboardInvitationIdDefault1764700000000,
    ],
    applicationName: 'dashboard',
    poolSize: 5,
  };
}
