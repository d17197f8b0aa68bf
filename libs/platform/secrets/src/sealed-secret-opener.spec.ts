import { randomBytes } from 'node:crypto';
import { DomainError } from '@meridian/errors';
import pino from 'pino';
import { Registry } from 'prom-client';
import { SealedSecretOpener, type SealedSecretOpenerOptions } from './sealed-secret-opener';
import { SecretKeyRing } from './secret-box-ring';

const options: SealedSecretOpenerOptions = {
  metric: { name: 'thing_secret_open_failures_total', help: 'Sealed things that did not open' },
  subjectField: 'thingId',
  logMessage: "thing's secret cannot be opened",
  unavailableMessage: "this thing's secret cannot be read now; try again later",
};

function openerOf(ring: SecretKeyRing, registry = new Registry()) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const opener = new SealedSecretOpener(ring, logger, registry, options);
  return { opener, lines, registry };
}

/** What `fn` throws (a rejection), or a failure when it does not throw. */
const failureOf = (fn: () => unknown): Promise<unknown> =>
  Promise.resolve()
    .then(fn)
    .then(
      () => Promise.reject(new Error('did not throw')),
      (error: unknown) => error,
    );

describe('SealedSecretOpener', () => {
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);

  it('seals under the current key and opens under any key of the ring', () => {
    const { opener: old } = openerOf(new SecretKeyRing(keyA));
    const { opener } = openerOf(new SecretKeyRing(keyB, [keyA]));
    const sealed = opener.seal('s3cret');
    expect(sealed.startsWith(opener.ring.currentPrefix)).toBe(true);
    expect(opener.open('t1', sealed)).toBe('s3cret');
    expect(opener.open('t1', old.seal('older'))).toBe('older');
  });

  it('answers a value under a key the ring lacks with a retryable 503, logged and counted', async () => {
    const { opener: other } = openerOf(new SecretKeyRing(keyA));
    const { opener, lines, registry } = openerOf(new SecretKeyRing(keyB));
    const error = await failureOf(() => opener.open('t7', other.seal('x')));
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({
      code: 'secret_unavailable',
      message: options.unavailableMessage,
      retryable: true,
    });
    expect(lines).toEqual([
      expect.objectContaining({
        level: 50,
        thingId: 't7',
        reason: 'unknown_key',
        keyId: other.ring.currentKeyId,
        msg: options.logMessage,
      }),
    ]);
    await failureOf(() => opener.open('t8', 'v2.garbage'));
    const metrics = await registry.getSingleMetricAsString(options.metric.name);
    expect(metrics).toContain(`# HELP ${options.metric.name} ${options.metric.help}`);
    expect(metrics).toContain(`${options.metric.name}{reason="unknown_key"} 1`);
    expect(metrics).toContain(`${options.metric.name}{reason="malformed"} 1`);
  });

  it('counts into one counter when two openers share a registry', async () => {
    const { opener: first, registry } = openerOf(new SecretKeyRing(keyB));
    const { opener: second } = openerOf(new SecretKeyRing(keyB), registry);
    const sealed = openerOf(new SecretKeyRing(keyA)).opener.seal('x');
    await failureOf(() => first.open('a', sealed));
    await failureOf(() => second.open('b', sealed));
    expect(await registry.getSingleMetricAsString(options.metric.name)).toContain(
      `${options.metric.name}{reason="unknown_key"} 2`,
    );
  });
});
