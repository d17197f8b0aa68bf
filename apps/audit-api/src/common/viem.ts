/*
 * viem publishes its type declarations as ESM (_types/package.json has "type":"module") while
 * this workspace type-checks as CommonJS under node16 resolution, so tsc reports TS1479 on every
 * direct import although the CJS build (_cjs) is what runs. Every file of this app imports viem
 * through here so the mismatch is silenced in one place; the types still resolve.
 */
// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- ts-expect-error would break if a later viem fixes its types
// @ts-ignore TS1479 (see above)
export * from 'viem';
