import { FakeDns } from '@meridian/testing';
import { dnsServersResolver, parseDnsServers } from './dns-servers-resolver';

describe('DELIVERY_DNS_SERVERS', () => {
  it('takes IPs with optional ports, comma-separated; an empty list is none', () => {
    expect(parseDnsServers('10.0.0.53, 10.0.0.54:5353,[fd00::53]:53 ,fd00::54')).toEqual([
      '10.0.0.53',
      '10.0.0.54:5353',
      '[fd00::53]:53',
      'fd00::54',
    ]);
    expect(parseDnsServers(' , ')).toBeUndefined();
  });

  it.each(['dns.example.com', '10.0.0.53:99999', '10.0.0:53', 'fd00::53:53x', '[10.0.0.53]:53'])(
    'refuses %s',
    (entry) => {
      expect(() => parseDnsServers(entry)).toThrow(`"${entry}" is not an IP address`);
    },
  );
});

describe('dnsServersResolver (against a fake DNS server)', () => {
  const dns = new FakeDns({
    'inside.example.com': ['10.0.0.7'],
    'both.example.com': ['93.184.216.34', '2606:4700::1111'],
    'v6only.example.com': ['fd00::7'],
    'no-address.example.com': [],
  });
  let server: string;
  beforeAll(async () => {
    server = await dns.start();
  });
  afterAll(() => dns.stop());

  it('returns every A and AAAA address the servers give, asking them and not /etc/hosts', async () => {
    const resolve = dnsServersResolver([server]);
    expect(await resolve('inside.example.com')).toEqual([{ address: '10.0.0.7', family: 4 }]);
    expect(await resolve('both.example.com')).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700::1111', family: 6 },
    ]);
    expect(await resolve('v6only.example.com')).toEqual([{ address: 'fd00::7', family: 6 }]);
    // /etc/hosts names localhost; these servers do not.
    await expect(resolve('localhost')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(dns.questions).toEqual(
      expect.arrayContaining(['A inside.example.com', 'AAAA inside.example.com', 'A localhost']),
    );
  });

  it('a name that does not exist or has no address fails as ENOTFOUND (the dns error class)', async () => {
    const resolve = dnsServersResolver([server]);
    await expect(resolve('nowhere.example.com')).rejects.toMatchObject({
      code: 'ENOTFOUND',
      hostname: 'nowhere.example.com',
    });
    await expect(resolve('no-address.example.com')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('servers that do not answer fail as EAI_AGAIN (a temporary DNS failure), not as a hang', async () => {
    const silent = new FakeDns();
    const address = await silent.start();
    await silent.stop(); // nothing listens there now
    const resolve = dnsServersResolver([address]);
    await expect(resolve('inside.example.com')).rejects.toMatchObject({ code: 'EAI_AGAIN' });
  }, 15_000);
});
