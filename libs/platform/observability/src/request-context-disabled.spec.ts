import { currentRequestId, disableRequestContext, enterRequest } from './process-guard';

// Its own file: the switch is for the whole process (jest gives each file its own modules).
describe('disableRequestContext', () => {
  it('makes enterRequest a no-op from then on: no request id is carried (the rpc-gateway, ADR 0210)', async () => {
    await Promise.resolve().then(() => {
      enterRequest('before');
      expect(currentRequestId()).toBe('before');
    });
    disableRequestContext();
    await Promise.resolve().then(() => {
      enterRequest('after');
      expect(currentRequestId()).not.toBe('after');
    });
  });
});
