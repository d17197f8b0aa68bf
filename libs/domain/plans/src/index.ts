export * from './plan.types';
export * from './plan.table';
export * from './plan-limits';
export * from './allowance-window';
export * from './webhook-counting';
