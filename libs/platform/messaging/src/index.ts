export * from './messaging.module';
