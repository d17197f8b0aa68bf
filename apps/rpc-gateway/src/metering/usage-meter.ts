/**
 * CU of served calls per account → (network, method), drained once a window into the fleet
 * usage flush (ADR 0103). The meter is the shared one of @meridian/platform-messaging, so the
 * gateway and delivery-worker fill the same contract the same way.
 */
export { UsageMeter } from '@meridian/platform-messaging';
