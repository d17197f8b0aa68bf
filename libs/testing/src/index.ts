export { FakeClock } from '@meridian/time';
export * from './free-port';
export * from './test-database';
export * from './nats-namespace';
export * from './anvil';
export * from './fake-dns';
export * from './deployed-node-options';
export * from './app-process';
export * from './billing-ledger-process';
