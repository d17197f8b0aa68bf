/**
 * The test helpers of platform-db's queues (`@meridian/platform-db/testing`): FakeClock-driven
 * wait timers and the work gates their unit tests use. An entry of their own, so the runtime
 * entry exports no test code and `@meridian/testing` need not depend on this library.
 */
export * from './fake-clock-timers';
