export * from './api-route.decorator';
export * from './openapi-document';
export * from './reference-page';
export * from './routes';
export * from './serve-openapi';
