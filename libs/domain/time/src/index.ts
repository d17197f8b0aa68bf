export * from './clock';
export * from './utc-minute';
