import { createAnnouncer } from './announcer';

describe('createAnnouncer', () => {
  it('holds the last words and tells its listeners', () => {
    const announcer = createAnnouncer();
    const heard: string[] = [];
    const stop = announcer.subscribe(() => heard.push(announcer.snapshot()));
    expect(announcer.snapshot()).toBe('');
    announcer.announce('Webhook paused.');
    announcer.announce('Webhook resumed: active.');
    stop();
    announcer.announce('Not heard.');
    expect(heard).toEqual(['Webhook paused.', 'Webhook resumed: active.']);
    expect(announcer.snapshot()).toBe('Not heard.');
  });

  it('changes the text when the same words come twice, so a screen reader reads both', () => {
    const announcer = createAnnouncer();
    announcer.announce('No delivery matches this search.');
    const first = announcer.snapshot();
    announcer.announce('No delivery matches this search.');
    expect(announcer.snapshot()).not.toBe(first);
    expect(announcer.snapshot().trim()).toBe(first);
    // A third time is the plain words again: still a change.
    announcer.announce('No delivery matches this search.');
    expect(announcer.snapshot()).toBe(first);
  });
});
