/**
 * Prints the nats-server `authorization` block of a deployment (ADR 0507): one user per app and
 * one for the provisioning Job, each with only the subjects its code uses, rendered from
 * `natsPermissionsOf` (libs/platform/messaging/src/nats-permissions.ts).
 *
 *   node -r @swc-node/register deploy/nats/render-authorization.ts > deploy/nats/authorization.conf
 *
 * Env, the provisioning Job's: NATS_PREFIX (default empty), MATCHER_PARTITIONS and
 * DELIVERY_PARTITIONS (default 1; deploy/ runs 2 of each). The committed
 * deploy/nats/authorization.conf is this output for deploy/base/core/provision-job.yaml's values
 * (deploy/nats/nats-permissions.int-spec.ts fails when they differ). Exit code 0, or 1 with one
 * line on stderr for a bad variable.
 */
import { commonEnv, loadConfigOrExit } from '@meridian/platform-config';
import { partitionCountSetting } from '@meridian/contracts';
import { natsAuthorizationConfig } from '@meridian/platform-messaging';
import { z } from 'zod';

const config = loadConfigOrExit(
  z.object({
    NATS_PREFIX: commonEnv.NATS_PREFIX,
    MATCHER_PARTITIONS: partitionCountSetting,
    DELIVERY_PARTITIONS: partitionCountSetting,
  }),
);
process.stdout.write(
  natsAuthorizationConfig({
    prefix: config.NATS_PREFIX,
    matcherPartitions: config.MATCHER_PARTITIONS,
    deliveryPartitions: config.DELIVERY_PARTITIONS,
  }),
);
