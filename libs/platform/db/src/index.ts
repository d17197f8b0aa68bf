export * from './data-source';
export * from './db.module';
