// Secrets sealed at rest under a key ring that rotates (ADR 0424, 0603): the ring and its
// sealed format, the opener that turns a value it cannot open into a counted 503, the reseal
// command's passes, and the config setting of a ring's current key.
export * from './secret-box';
export * from './sealed-secret-opener';
export * from './reseal-passes';
export * from './secrets-key-setting';
