// The one token bucket of the project (gateway RPS, audit RPS, webhook events per second), and
// the one sliding window over counted rows (sign-in failures, sign-ups, test deliveries).
export * from './token-bucket';
export * from './token-buckets';
export * from './lease-script';
export * from './sliding-window';
