import { commonEnv, secretListSetting, secretSetting, urlOf } from '@meridian/platform-config';
import { ENDPOINTS, REGIONS } from '@meridian/networks';
import { parseSecretsKeyList, secretsKeySetting } from '@meridian/platform-secrets';
import { z } from 'zod';

const jsonOf = <S extends z.ZodType>(schema: S, hint: string) =>
  z
    .string()
    .default('{}')
    .transform((text, ctx): z.output<S> => {
      try {
        return schema.parse(JSON.parse(text));
      } catch {
        ctx.addIssue({ code: 'custom', message: hint });
        return z.NEVER;
      }
    });

const httpUrl = urlOf(['http:', 'https:']);

/** Every variable the dashboard reads, validated at start; nothing else reads process.env. */
export const configSchema = z.object({
  LOG_LEVEL: commonEnv.LOG_LEVEL,
  HTTP_HOST: commonEnv.HTTP_HOST,
  HTTP_PORT: commonEnv.HTTP_PORT,
  REQUEST_LOGS: commonEnv.REQUEST_LOGS,
  DATABASE_URL: commonEnv.DATABASE_URL,
  /** billing-ledger REST base, e.g. http://billing:7101/api/v1 (account + operator API). */
  BILLING_API_URL: httpUrl,
  /** webhook-matcher REST base, e.g. http://matcher:7103/api/v1. */
  WEBHOOKS_API_URL: httpUrl,
  /** audit-api base ending in /v1. */
  AUDIT_API_URL: httpUrl,
  /** billing-ledger's operator token: sign-up creates accounts and operators act through it. */
  OPERATOR_TOKEN: secretSetting(z.string().min(16)),
  /** 32 bytes, base64: seals each account's API key at rest (AES-256-GCM, a key ring, ADR 0603). */
  DASHBOARD_SECRETS_KEY: secretsKeySetting(),
  /**
   * Keys that open API keys sealed before DASHBOARD_SECRETS_KEY (comma-separated, 32 bytes base64
   * each); they never seal. Set only during a rotation (README "Rotating DASHBOARD_SECRETS_KEY").
   */
  DASHBOARD_SECRETS_PREVIOUS_KEYS: secretListSetting(parseSecretsKeyList).optional(),
  /** Default sign-up mode until an operator changes it on the settings page. */
  SIGNUP_MODE: z.enum(['open', 'invite']).default('open'),
  /** The operator user made (once) at start; without both, no operator exists. */
  OPERATOR_EMAIL: z.string().email().optional(),
  OPERATOR_PASSWORD: secretSetting(z.string().min(12)).optional(),
  /** Public node-access bases shown on the node-access page: {"eu": "https://…/", …, "shared": …}. */
  PUBLIC_RPC_URLS: jsonOf(
    z.partialRecord(z.enum(ENDPOINTS), httpUrl),
    'must be a JSON object of endpoint (eu, us, asia, shared) -> http(s) URL',
  ),
  /** Public gRPC addresses (host:port) per region, for network P. */
  PUBLIC_GRPC_ADDRESSES: jsonOf(
    z.partialRecord(z.enum(REGIONS), z.string().min(1)),
    'must be a JSON object of region (eu, us, asia) -> host:port',
  ),
  /** Public bases shown next to API keys (account, webhooks, audit); default: the upstream URLs. */
  PUBLIC_ACCOUNT_URL: httpUrl.optional(),
  PUBLIC_WEBHOOKS_URL: httpUrl.optional(),
  PUBLIC_AUDIT_URL: httpUrl.optional(),
  /** Session lifetime (idle sessions end sooner: SESSION_IDLE_MS). */
  SESSION_TTL_MS: z.coerce
    .number()
    .int()
    .min(60_000)
    .default(7 * 24 * 3_600_000),
  SESSION_IDLE_MS: z.coerce
    .number()
    .int()
    .min(60_000)
    .default(24 * 3_600_000),
  /**
   * Sign-in throttle (auth/login-throttle.ts, ADR 0601 amendment), each in LOGIN_WINDOW_MS:
   * failures of one email from one client address before that pair waits (the lock), ...
   */
  LOGIN_MAX_FAILURES: z.coerce.number().int().min(1).default(5),
  /** ... of one email from every address (addresses it signed in from lately exempt), ... */
  LOGIN_MAX_FAILURES_PER_ACCOUNT: z.coerce.number().int().min(1).default(100),
  /** ... and from one address for every email (its known emails exempt). */
  LOGIN_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).default(20),
  /** How long a sign-in makes its (email, client address) known to the throttle. */
  LOGIN_KNOWN_ADDRESS_MS: z.coerce
    .number()
    .int()
    .min(60_000)
    .default(30 * 24 * 3_600_000),
  LOGIN_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(15 * 60_000),
  /** Sign-ups allowed per client address in SIGNUP_WINDOW_MS (each is a Free billing account). */
  SIGNUP_MAX_PER_ADDRESS: z.coerce.number().int().min(1).default(5),
  SIGNUP_WINDOW_MS: z.coerce.number().int().min(1_000).default(3_600_000),
  /**
   * The proxies in front of the dashboard whose X-Forwarded-For gives the client's address, which
   * the sign-in and sign-up throttles count by: a number of hops (1: one ingress) or a comma list
   * of addresses and CIDRs. Empty: none (the peer's address; behind an ingress that is the
   * ingress for everyone, so every client would share one throttle).
   */
  TRUST_PROXY: z
    .string()
    .default('')
    .refine(
      (v) => v === '' || /^\d+$/.test(v) || /^[0-9a-fA-F.:/]+(,\s*[0-9a-fA-F.:/]+)*$/.test(v),
      {
        message: 'a hop count or a comma list of addresses/CIDRs',
      },
    )
    .transform((v) => (v === '' ? undefined : /^\d+$/.test(v) ? Number(v) : v)),
  /** Cookies marked Secure (off only for plain-http local stacks). */
  COOKIE_SECURE: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  /** Built single-page app (vite outDir); served with an index.html fallback. */
  WEB_DIST_DIR: z.string().optional(),
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
});

export type AppConfig = z.infer<typeof configSchema>;
