export * from './data-source';
export * from './db.module';
export * from './migrate-command';
export * from './statement-batcher';
export * from './pg-errors';
export * from './retention-pruner';
export * from './revert-migrations';
export * from './connect-log';
