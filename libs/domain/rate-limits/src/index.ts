// The one token bucket of the project (gateway RPS, audit RPS, webhook events per second).
export * from './token-bucket';
export * from './token-buckets';
export * from './lease-script';
