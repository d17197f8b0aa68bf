export * from './network.types';
export * from './method.table';
export * from './method-traits';
export * from './network.table';
export * from './network-lookup';
export * from './audit-chain.table';
export * from './evm-address';
export * from './finality';
