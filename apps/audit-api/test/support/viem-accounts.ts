// viem's account helpers live in a subpath with ESM-only type declarations (see src/common/viem.ts).
// eslint-disable-next-line @typescript-eslint/ban-ts-comment
// @ts-ignore TS1479
export { privateKeyToAccount } from 'viem/accounts';
