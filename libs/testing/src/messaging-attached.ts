/** The gauges of @meridian/platform-messaging that say an app's NATS side works (ADR 0212). */
const ATTACHED_GAUGES = ['messaging_consumer_attached', 'messaging_kv_mirror_loaded'];

/**
 * Whether a Prometheus text exposition (an app's /metrics) shows every durable consumer of the
 * app attached and every KV mirror loaded: the app works, not only serves. `/readyz` no longer
 * says it (NATS is not part of readiness, ADR 0212 amendment), so a test or the local stack that
 * must wait until the app consumes waits for this too. True for an app with neither.
 */
export function messagingAttachedIn(text: string): boolean {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{.*\})? (\S+)$/.exec(line);
    if (match && ATTACHED_GAUGES.includes(match[1]!) && Number(match[2]) !== 1) return false;
  }
  return true;
}

/** `messagingAttachedIn` of `<baseUrl>/metrics`; false when it does not answer 200. */
export async function messagingAttached(baseUrl: string): Promise<boolean> {
  const response = await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(5_000) }).catch(
    () => undefined,
  );
  if (!response?.ok) {
    await response?.body?.cancel();
    return false;
  }
  return messagingAttachedIn(await response.text());
}
