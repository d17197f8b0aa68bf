// Webhook rules of the spec's part (C), pure: the status machine, the filter model and its
// evaluation, the delivery schedule, payload shape and signing, the address rules of targets.
export * from './bounds';
export * from './address-ranges';
export * from './target-url';
export * from './filter-model';
export * from './status-machine';
export * from './delivery-schedule';
export * from './signing';
export * from './block-activities';
export * from './filter-eval';
export * from './event-id';
export * from './payload';
export * from './secret-rotation';
