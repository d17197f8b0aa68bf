import { SerialRun } from './serial-run';

describe('SerialRun', () => {
  it('runs one at a time; a call during a run gets a run that starts after it', async () => {
    const log: string[] = [];
    let release!: () => void;
    let n = 0;
    const serial = new SerialRun(async () => {
      const i = (n += 1);
      log.push(`start ${i}`);
      if (i === 1) await new Promise<void>((resolve) => (release = resolve));
      log.push(`end ${i}`);
    });
    const first = serial.run();
    const second = serial.run();
    const third = serial.run();
    await Promise.resolve();
    expect(log).toEqual(['start 1']);
    release();
    await Promise.all([first, second, third]);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
  });

  it('a failed run rejects its caller only; the next call runs', async () => {
    let runs = 0;
    const serial = new SerialRun(async () => {
      if ((runs += 1) === 1) throw new Error('boom');
    });
    const failed = serial.run();
    const next = serial.run();
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBeUndefined();
    expect(runs).toBe(2);
    await expect(serial.idle()).resolves.toBeUndefined();
  });
});
