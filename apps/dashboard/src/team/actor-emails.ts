/**
 * A list's items with who acted as a person (`created_by_email`), as the key list names a key's
 * maker: a user of the account, null for a label of a user since removed (ADR 0604: the
 * dashboard forgets a removed person; the pages say "removed member"). An item naming nobody
 * (`created_by` null: the operator's, a key of no person) is left as it is. One rule for the
 * customer's relay (`namesActor`) and the operator's account page.
 */
export function withActorEmails(body: unknown, emails: ReadonlyMap<string, string>): unknown {
  const items = isObject(body) && Array.isArray(body['items']) ? body['items'] : undefined;
  if (!items) return body;
  return {
    ...(body as Record<string, unknown>),
    items: items.map((item: unknown) => {
      const by = isObject(item) ? item['created_by'] : undefined;
      return typeof by === 'string'
        ? { ...(item as object), created_by_email: emails.get(by) ?? null }
        : item;
    }),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
