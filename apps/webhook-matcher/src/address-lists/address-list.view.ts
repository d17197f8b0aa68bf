import type { AddressListRow } from './address-lists.repository';

export function addressListView(row: AddressListRow) {
  return {
    id: row.id,
    name: row.name,
    size: row.entry_count,
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
