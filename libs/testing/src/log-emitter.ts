/**
 * Init code of a contract creation that emits `count` logs of `bytes` zero bytes each (LOG1,
 * topic = the log's ordinal, emitter = the created address) and deploys nothing: one cheap
 * transaction carrying megabytes of logs (a log of 1 MiB costs ~10M gas), as any account can
 * send. `count` ≤ 255, `bytes` < 16 MiB.
 *
 *   PUSH1 0 · loop: JUMPDEST DUP1 PUSH3 bytes PUSH1 0 LOG1 PUSH1 1 ADD DUP1 PUSH1 count GT
 *   PUSH1 2 JUMPI · STOP
 */
export function logEmitterInitCode(count: number, bytes: number): `0x${string}` {
  if (!Number.isInteger(count) || count < 1 || count > 0xff) throw new RangeError('count 1-255');
  if (!Number.isInteger(bytes) || bytes < 0 || bytes > 0xffffff) throw new RangeError('bytes');
  const hex = (n: number, width: number) => n.toString(16).padStart(width * 2, '0');
  return `0x60005b8062${hex(bytes, 3)}6000a160010180${'60'}${hex(count, 1)}1160025700`;
}
