import { messagingAttachedIn } from './messaging-attached';

describe('messagingAttachedIn', () => {
  const exposition = (consumer: number, mirror: number) =>
    [
      '# HELP messaging_consumer_attached 1 while attached',
      '# TYPE messaging_consumer_attached gauge',
      `messaging_consumer_attached{consumer="a",service="x"} 1`,
      `messaging_consumer_attached{consumer="b",service="x"} ${consumer}`,
      `messaging_kv_mirror_loaded{bucket="k",service="x"} ${mirror}`,
      'nats_connected{service="x"} 0',
    ].join('\n');

  it('is true only when every consumer is attached and every mirror loaded', () => {
    expect(messagingAttachedIn(exposition(1, 1))).toBe(true);
    expect(messagingAttachedIn(exposition(0, 1))).toBe(false);
    expect(messagingAttachedIn(exposition(1, 0))).toBe(false);
  });

  it('is true for an app with neither', () => {
    expect(messagingAttachedIn('nats_connected{service="x"} 1\n')).toBe(true);
  });
});
