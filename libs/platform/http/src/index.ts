export * from './create-http-app';
export * from './domain-error.filter';
export * from './method-not-allowed';
export * from './request-fingerprint';
export * from './request-id';
export * from './request-text';
export * from './request-validation';
export * from './shared-secrets';
