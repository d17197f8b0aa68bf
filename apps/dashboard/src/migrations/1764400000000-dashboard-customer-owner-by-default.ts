import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Expand step for `DashboardTeams1764100000000` (QA, rolling upgrade): a customer inserted
 * without an `account_role` owns the account it names. The release before teams writes users
 * without the column, and its pods keep serving sign-ups while the new ones roll out; the check
 * `users_account_role` refused each of those inserts after billing had already made the
 * account (an account with a live API key and no user). Such a sign-up meant "this user owns
 * their new account", so the row is made `owner`.
 *
 * A trigger, not a column default: a default cannot read `role`, and the older release's
 * operator insert (ensureOperator) omits the column too, so `DEFAULT 'owner'` would give an
 * operator an account role. Only a customer's NULL is filled; the current code writes every
 * column explicitly (`UsersRepository.insert`: `owner` or `member` for a customer, NULL for the
 * operator), so what it stores is unchanged. The check stays, and still refuses an UPDATE that
 * clears a customer's role. Contract step, once upgrades from a release before teams are no
 * longer supported: drop the trigger.
 */
export class DashboardCustomerOwnerByDefault1764400000000 implements MigrationInterface {
  name = 'DashboardCustomerOwnerByDefault1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE FUNCTION dashboard.users_customer_owner_by_default() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.role = 'customer' AND NEW.account_role IS NULL THEN
          NEW.account_role := 'owner';
        END IF;
        RETURN NEW;
      END
      $$`);
    await q.query(`CREATE TRIGGER users_customer_owner_by_default
      BEFORE INSERT ON dashboard.users FOR EACH ROW
      EXECUTE FUNCTION dashboard.users_customer_owner_by_default()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER users_customer_owner_by_default ON dashboard.users`);
    await q.query(`DROP FUNCTION dashboard.users_customer_owner_by_default()`);
  }
}
