export * from './compute-units';
