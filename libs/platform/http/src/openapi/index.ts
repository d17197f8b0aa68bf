export * from './api-route.decorator';
export * from './openapi-document';
export * from './openapi.controller';
export * from './reference-page';
export { refsOutsideComponents, SchemaComponents } from './schema-components';
export * from './routes';
export * from './declared-errors';
