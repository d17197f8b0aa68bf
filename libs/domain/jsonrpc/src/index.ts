export * from './jsonrpc-error';
export * from './request-parser';
export * from './response-parser';
export * from './serializer';
export {
  firstDuplicateKey,
  scanRawMembers,
  scanRawMembersOfElements,
  type RawMembers,
} from './raw-json-scanner';
