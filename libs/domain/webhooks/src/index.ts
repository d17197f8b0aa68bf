// Webhook rules of the spec's part (C), pure: the status machine, the filter model and its
// evaluation, the delivery schedule, payload shape and signing. Filled by the webhook issues.
export {};
