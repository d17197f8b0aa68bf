import type { AddressListResponse } from './address-list-response.schemas';
import type { AddressListRow } from './address-lists.repository';

/** An address list as the API answers it; its schema is `addressListResponse`. */
export function addressListView(row: AddressListRow): AddressListResponse {
  return {
    id: row.id,
    name: row.name,
    size: row.entry_count,
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
