export * from './api-route.decorator';
export * from './openapi-document';
export * from './openapi.controller';
export * from './reference-page';
export * from './routes';
