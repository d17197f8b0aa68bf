import { z } from 'zod';

const url = (protocols: string[]) =>
  z.string().refine(
    (value) => {
      try {
        return protocols.includes(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    `must be a URL with scheme ${protocols.join(' or ')}`,
  );

export const port = z.coerce.number().int().min(0).max(65_535);

/** Variables every app reads. Apps extend this with their own. */
export const commonEnv = {
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  HTTP_HOST: z.string().default('0.0.0.0'),
  HTTP_PORT: port,
  DATABASE_URL: url(['postgres:', 'postgresql:']),
  NATS_URL: url(['nats:', 'tls:']).default('nats://127.0.0.1:4222'),
  /** Prefix applied to every subject, stream, consumer and KV bucket (test isolation, multi-tenant brokers). */
  NATS_PREFIX: z
    .string()
    .regex(/^[a-zA-Z0-9_-]*$/, 'letters, digits, _ and - only')
    .default(''),
};

export const urlOf = url;
