export * from './logger';
export * from './metrics';
export * from './build-info';
export * from './readiness';
export * from './health.controller';
export * from './observability.module';
export * from './process-guard';
export * from './log-safe';
