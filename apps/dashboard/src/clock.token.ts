/** Injection token of the Clock (sessions, throttling and invitations read time from it). */
export const CLOCK = Symbol('CLOCK');
