import { MISSING_OBJECT_ID, startFakeSuiUpstream, type FakeSuiUpstream } from './fake-sui-upstream';

/**
 * QA PP: the fake answered every `sui_tryMultiGetPastObjects` with one canned 0x5 object, without
 * the digest the Sui SDK's SuiObjectData requires, whatever refs and options were asked. Now one
 * answer per ref, in a node's SuiPastObjectResponse shape.
 */
describe('fake-sui-upstream: sui_tryMultiGetPastObjects', () => {
  let fake: FakeSuiUpstream;
  beforeAll(async () => {
    fake = await startFakeSuiUpstream();
  });
  afterAll(() => fake.close());

  const ask = async (params: unknown[]) => {
    const answer = await fetch(fake.url, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sui_tryMultiGetPastObjects', params }),
    });
    return ((await answer.json()) as { result: Record<string, unknown>[] }).result;
  };

  it('answers each ref asked, echoing its id (as a node writes it) and version, with a digest', async () => {
    const result = await ask([
      [
        { objectId: '0x5', version: '7' },
        { objectId: `0x${'AB'.repeat(32)}`, version: '12' },
        { objectId: MISSING_OBJECT_ID, version: '1' },
      ],
    ]);
    expect(result).toEqual([
      {
        status: 'VersionFound',
        details: { objectId: `0x${'0'.repeat(63)}5`, version: '7', digest: expect.any(String) },
      },
      {
        status: 'VersionFound',
        details: { objectId: `0x${'ab'.repeat(32)}`, version: '12', digest: expect.any(String) },
      },
      { status: 'ObjectNotExists', details: MISSING_OBJECT_ID },
    ]);
    const digests = result.slice(0, 2).map((r) => (r.details as { digest: string }).digest);
    for (const digest of digests) expect(digest).toMatch(/^[1-9A-HJ-NP-Za-km-z]{43,44}$/);
    expect(digests[0]).not.toBe(digests[1]);
  });

  it('adds the fields the options ask for, and only those', async () => {
    const [bare] = await ask([[{ objectId: '0x5', version: '1' }], { showContent: false }]);
    expect(Object.keys(bare!.details as object).sort()).toEqual(['digest', 'objectId', 'version']);
    const [full] = await ask([
      [{ objectId: '0x5', version: '1' }],
      { showType: true, showOwner: true, showContent: true, showBcs: true, showDisplay: true },
    ]);
    expect(full!.details).toMatchObject({
      type: '0x2::coin::Coin<0x2::sui::SUI>',
      owner: { AddressOwner: expect.stringMatching(/^0x[0-9a-f]{64}$/) },
      content: { dataType: 'moveObject', type: '0x2::coin::Coin<0x2::sui::SUI>', fields: {} },
      bcs: { dataType: 'moveObject', version: 1, bcsBytes: expect.any(String) },
      display: { data: null, error: null },
    });
  });
});
