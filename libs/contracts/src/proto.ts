/**
 * Generated protobuf-es code (proto/ -> src/gen by `buf generate`), re-exported under one
 * namespace per proto package because bor and billing both define names like `Block`/`Header`.
 *   import { billingV1, bor, borCommon } from '@meridian/contracts';
 *   create(billingV1.ResolveAccessTokenRequestSchema, { token });
 */
export * as billingV1 from './gen/billing/v1/billing_pb';
export * as bor from './gen/bor/v1/bor_pb';
export * as borCommon from './gen/bor/v1/common_pb';
