export * from './jsonrpc-error';
export * from './request-parser';
export * from './response-parser';
export * from './serializer';
export {
  paramsShapeIssue,
  type ParamsShapeIssue,
  scanRawMembers,
  scanRawMembersOfElements,
  type RawMembers,
} from './raw-json-scanner';
