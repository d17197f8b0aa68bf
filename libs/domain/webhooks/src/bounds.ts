// The bounds of a webhook's fields, with no import at all: the dashboard's page bundles this
// module alone (`@meridian/webhooks/bounds`, a vite alias) to check its form by the API's
// numbers, while the lib's index pulls in node:crypto (signing, event ids). Re-exported by the
// index, so server code imports them from `@meridian/webhooks` as before.

/** COMPAT: a filter tree is at most 8 levels deep and 256 nodes large. */
export const MAX_FILTER_DEPTH = 8;
export const MAX_FILTER_NODES = 256;
/** COMPAT: `confirm_depth` is 2–96 blocks, 96 when not given. */
export const CONFIRM_DEPTH_MIN = 2;
export const CONFIRM_DEPTH_MAX = 96;
export const DEFAULT_CONFIRM_DEPTH = 96;
/** Transaction hashes one filter may watch (ours: COMPAT has no such leaf; ADR 0421). */
export const MAX_TX_HASHES = 1_000;
/** A transaction hash as a filter's `tx_hash` leaf takes it: 0x and 64 hex digits, any case. */
export const TX_HASH_PATTERN = /^0x[0-9a-fA-F]{64}$/;
