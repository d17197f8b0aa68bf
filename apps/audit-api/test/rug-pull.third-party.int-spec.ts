import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeClock, startAnvil, type AnvilInstance } from '@meridian/testing';
import { parseAbi, type Address } from 'viem';
import { deployRealWorldToken } from '../bench/real-world-corpus';
import {
  compileFromPackage,
  THIRD_PARTY_TOKENS,
  thirdPartyArtifacts,
} from '../bench/third-party-corpus';
import { errorResponseSchema, rugPullResponseSchema } from '../src/wallet/audit-response.schemas';
import { loadOneLabel, startAuditApp, type AuditTestApp } from './support/audit-app';
import { setUpDevnet, SUPPLY, type Devnet } from './support/devnet';
import { InTestCredentialSource } from './support/in-test-credentials';

const KEY = 'third-party-key';
const HANDED_TO = '0x00000000000000000000000000000000000a11ce';
const UPGRADE_ABI = parseAbi(['function upgradeTo(address)']);

const credentials = () =>
  new InTestCredentialSource().add(KEY, {
    planId: 'enterprise',
    auditQuota: { checksPerDay: 1e6, requestsPerSecond: 1e6 },
  });

interface RpcCall {
  id: number;
  method: string;
}
interface RpcAnswer {
  jsonrpc: string;
  id: number;
  result?: unknown;
}

/**
 * A JSON-RPC front for anvil that misbehaves on one method: `garbage` answers a result no client
 * can read, `hang` never answers. Everything else is passed to anvil.
 */
async function faultyNode(
  upstream: string,
  method: string,
  fault: 'garbage' | 'hang',
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      // The checker's client batches its reads: a body is one call or an array of them.
      const parsed = JSON.parse(body) as RpcCall | RpcCall[];
      const calls = Array.isArray(parsed) ? parsed : [parsed];
      const hit = calls.filter((c) => c.method === method).map((c) => c.id);
      if (hit.length > 0 && fault === 'hang') return;
      void fetch(upstream, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
        .then((r) => r.json() as Promise<RpcAnswer | RpcAnswer[]>)
        .then((answer) => {
          const spoil = (a: RpcAnswer): RpcAnswer =>
            hit.includes(a.id) ? { jsonrpc: '2.0', id: a.id, result: '0xnot-a-number' } : a;
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(Array.isArray(answer) ? answer.map(spoil) : spoil(answer)));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The rug pull checker on tokens written by others, taken verbatim from npm packages
 * (bench/third-party-corpus.ts): canonical WETH9, UNI, Uniswap's and OpenZeppelin's tokens, and
 * weird-erc20's models of real tokens (no return values, fees, block lists, pauses, proxies),
 * deployed with Uniswap V2 liquidity. None is a scam; none may be called malicious.
 */
describe('rug pull checker on third-party tokens (npm packages, anvil + Uniswap V2)', () => {
  let anvil: AnvilInstance;
  let audit: AuditTestApp;
  let devnet: Devnet;
  const tokens: Record<string, Address> = {};
  const clock = new FakeClock(new Date());

  beforeAll(async () => {
    const built = thirdPartyArtifacts();
    anvil = await startAnvil({ chainId: 1 });
    devnet = await setUpDevnet(anvil.url);
    for (const token of THIRD_PARTY_TOKENS)
      tokens[token.contract] = await deployRealWorldToken(
        devnet,
        token,
        built[token.contract]!,
        SUPPLY,
      );
    audit = await startAuditApp(
      {
        AUDIT_RPC_URLS: JSON.stringify({ ETH: anvil.url }),
        AUDIT_DEX_ROUTERS: JSON.stringify({ ETH: [devnet.uniswap.router] }),
        AUDIT_VERDICT_TTL_MS: '0',
        // Tokens of one deployer are checked each on its own (a honeypot's creator would make
        // the others Fraud, ADR 0302 amendment).
        AUDIT_HONEYPOT_CREATOR_LINK: 'false',
      },
      { clock, credentials: credentials() },
    );
  }, 480_000);

  afterAll(async () => {
    await audit?.close();
    await anvil?.stop();
  });

  const checkOn = async (app: AuditTestApp, address: Address) => {
    clock.advance(1_000);
    return app.post('/v1/rug-pull/check', { network: 'ETH', contract_address: address }, KEY);
  };
  const check = async (contract: string) => {
    const response = await checkOn(audit, tokens[contract]!);
    if (response.status !== 200)
      throw new Error(`${contract}: ${response.status} ${JSON.stringify(response.body)}`);
    return rugPullResponseSchema.parse(response.body).data;
  };

  it.each(THIRD_PARTY_TOKENS.map((t) => [t.contract, t.pattern] as const))(
    '%s (%s): a verdict, Low Risk, Not Fraud',
    async (contract) => {
      const data = await check(contract);
      expect({ contract, risk: data.risk_status, status: data.status }).toEqual({
        contract,
        risk: 'Low Risk',
        status: 'Not Fraud',
      });
    },
  );

  it('transfer/approve that return nothing (weird-erc20 MissingReturns): traded and measured', async () => {
    const data = await check('MissingReturnToken');
    expect(data.risk_indicators).toMatchObject({
      has_liquidity_pool: 1,
      is_honeypot: 0,
      cannot_buy: 0,
      sell_tax: 0,
    });
  });

  it('an admin stored without owner() in unoptimised code is found by its CALLER comparison; a declared block list stays centralisation', async () => {
    // The admin (slot 4 of weird-erc20's BlockableToken) handed to an address that is neither the
    // creator nor an owner(): only the CALLER comparison in the code leads to it.
    const token = THIRD_PARTY_TOKENS.find((t) => t.contract === 'BlockableToken')!;
    const address = await deployRealWorldToken(
      devnet,
      token,
      thirdPartyArtifacts()['BlockableToken']!,
      SUPPLY,
    );
    await devnet.publicClient.request({
      method: 'anvil_setStorageAt',
      params: [address, '0x4', `0x${'0'.repeat(24)}${HANDED_TO.slice(2)}`],
    } as never);
    const response = await checkOn(audit, address);
    const data = rugPullResponseSchema.parse(response.body).data;
    expect(data.risk_indicators).toMatchObject({
      hidden_owner: 1,
      is_blacklisted: 1,
      hidden_power: 0,
      owner_can_block_sells: 0,
    });
    expect(data.centralization_risk.status).not.toBe('Low');
  });

  it('a stop() that pauses everyone, the admin too, is centralisation, not a trap', async () => {
    const data = await check('PausableToken');
    expect(data.risk_indicators).toMatchObject({
      transfer_pausable: 1,
      owner_can_block_sells: 0,
      hidden_power: 0,
    });
  });

  it('canonical WETH9: its public withdraw is no privilege, and no admin is found', async () => {
    const data = await check('WETH9');
    expect(data.forensic_details.privilege_withdraw).toBe(0);
    expect(data.risk_indicators.hidden_owner).toBe(0);
    expect(data.centralization_risk.score).toBe(0);
  });

  it('OpenZeppelin 4.9 ERC20PresetMinterPauser: roles held by the creator are found and reported as centralisation', async () => {
    const data = await check('ERC20PresetMinterPauser');
    expect(data.risk_indicators).toMatchObject({ is_mintable: 1, transfer_pausable: 1 });
    expect(data.centralization_risk.status).toBe('High');
  });

  it('UNI: the time-locked minter is a declared mint, not malice', async () => {
    const data = await check('Uni');
    expect(data.risk_indicators).toMatchObject({ is_mintable: 1, hidden_power: 0 });
  });

  /** OpenZeppelin 4.9 proxies in front of Uniswap's ERC20 (no mint); `upgrade` is sent by their admin. */
  const PROXIES = {
    transparent: async (logic: Address) => {
      const proxy = await deployFromPackage(
        '@openzeppelin/contracts-v4/proxy/transparent/TransparentUpgradeableProxy.sol',
        'TransparentUpgradeableProxy',
        [logic, devnet.deployer, '0x'],
      );
      // The admin's call goes to the proxy itself (EIP-1967 implementation slot).
      return {
        proxy,
        upgrade: (to: Address) => devnet.send(proxy, UPGRADE_ABI, 'upgradeTo', [to]),
      };
    },
    beacon: async (logic: Address) => {
      const beacon = await deployFromPackage(
        '@openzeppelin/contracts-v4/proxy/beacon/UpgradeableBeacon.sol',
        'UpgradeableBeacon',
        [logic],
      );
      const proxy = await deployFromPackage(
        '@openzeppelin/contracts-v4/proxy/beacon/BeaconProxy.sol',
        'BeaconProxy',
        [beacon, '0x'],
      );
      // Neither the proxy's code nor its storage changes: only the beacon's does.
      return {
        proxy,
        upgrade: (to: Address) => devnet.send(beacon, UPGRADE_ABI, 'upgradeTo', [to]),
      };
    },
  };
  const deployFromPackage = (source: string, name: string, args: readonly unknown[]) => {
    const built = compileFromPackage(source, name, true);
    return devnet.deploy(built.abi, built.bytecode, args);
  };

  /** The app on the devnet (or a front of it) with its verdict cache on (10 minutes). */
  const startCachingApp = (nodeUrl = anvil.url) =>
    startAuditApp(
      {
        AUDIT_RPC_URLS: JSON.stringify({ ETH: nodeUrl }),
        AUDIT_DEX_ROUTERS: JSON.stringify({ ETH: [devnet.uniswap.router] }),
        AUDIT_VERDICT_TTL_MS: String(10 * 60_000),
      },
      { clock, credentials: credentials() },
    );

  it.each(['transparent', 'beacon'] as const)(
    'EIP-1967 %s proxy: an upgrade is new code, so the cached verdict is not served after it',
    async (kind) => {
      const cached = await startCachingApp();
      try {
        const { proxy, upgrade } = await PROXIES[kind](tokens['UniswapV2ERC20']!);
        const ask = async () =>
          rugPullResponseSchema.parse((await checkOn(cached, proxy)).body).data;
        const before = await ask();
        expect(before.risk_indicators).toMatchObject({ is_proxy: 1, is_mintable: 0 });
        expect((await ask()).risk_indicators.is_mintable).toBe(0); // served from the cache
        // The admin upgrades, by a real transaction, to OpenZeppelin's minter/pauser logic.
        await upgrade(tokens['ERC20PresetMinterPauser']!);
        const after = await ask();
        expect(after.risk_indicators).toMatchObject({ is_proxy: 1, is_mintable: 1 });
      } finally {
        await cached.close();
      }
    },
    120_000,
  );

  // QA: a label added by a reload of the packs waited out the TTL (the key did not move).
  it('a reload of the label packs labelling a token answers afresh inside the TTL (Fraud)', async () => {
    const cached = await startCachingApp();
    try {
      const token = tokens['UniswapV2ERC20']!;
      const ask = async () => rugPullResponseSchema.parse((await checkOn(cached, token)).body).data;
      const before = await ask();
      expect([before.status, before.stale]).toEqual(['Not Fraud', false]);
      expect((await ask()).lastChecked).toBe(before.lastChecked); // served from the cache
      await loadOneLabel(cached, {
        address: token.toLowerCase(),
        category: 'malicious_contract',
        name: 'Drainer',
      });
      const after = await ask();
      expect(after.status).toBe('Fraud');
      expect(after.lastChecked).not.toBe(before.lastChecked);
    } finally {
      await cached.close();
    }
  }, 120_000);

  // ADR 0306: the wallet case is in wallet-audit.api.int-spec.ts; the rug pull checker serves
  // its cached verdict through the same CheckRunner path, and must say so the same way.
  it('with the node down, a verdict computed within the TTL is served stale (lastChecked says when); past the TTL, 502', async () => {
    // A front that passes every call to anvil (no method is faulted), so the node can go away
    // while anvil stays up for the cases after this one.
    const node = await faultyNode(anvil.url, 'no_such_method', 'hang');
    const cached = await startCachingApp(node.url);
    try {
      const token = tokens['UniswapV2ERC20']!;
      const ask = () => checkOn(cached, token);
      const first = rugPullResponseSchema.parse((await ask()).body).data;
      expect(first.stale).toBe(false);
      await node.close();
      clock.advance(3 * 60_000);
      const down = await ask();
      expect(down.status).toBe(200);
      const served = rugPullResponseSchema.parse(down.body).data;
      expect([served.status, served.lastChecked, served.stale]).toEqual([
        first.status,
        first.lastChecked,
        true,
      ]);
      clock.advance(10 * 60_000);
      const late = await ask();
      expect([late.status, errorResponseSchema.parse(late.body).error]).toEqual([
        502,
        'upstream_unavailable',
      ]);
    } finally {
      await cached.close();
    }
  }, 120_000);

  it.each([
    [
      'an answer we cannot read (our failure)',
      'eth_blockNumber',
      'garbage',
      500,
      'analysis_failed',
    ],
    ['a node that does not answer in time', 'eth_getCode', 'hang', 502, 'upstream_unavailable'],
  ] as const)(
    '%s: %s status, and the check is not counted',
    async (_name, method, fault, status, code) => {
      const node = await faultyNode(anvil.url, method, fault);
      const app = await startAuditApp(
        {
          AUDIT_RPC_URLS: JSON.stringify({ ETH: node.url }),
          AUDIT_DEX_ROUTERS: JSON.stringify({ ETH: [devnet.uniswap.router] }),
          AUDIT_VERDICT_TTL_MS: '0',
          // Tokens of one deployer are checked each on its own (a honeypot's creator would make
          // the others Fraud, ADR 0302 amendment).
          AUDIT_HONEYPOT_CREATOR_LINK: 'false',
          AUDIT_RPC_TIMEOUT_MS: '500',
          AUDIT_FORK_SIMULATION: 'false',
        },
        { clock, credentials: credentials() },
      );
      const used = async () =>
        (
          (
            await app.app.inject({
              method: 'GET',
              url: '/v1/quota',
              headers: { authorization: `Bearer ${KEY}` },
            })
          ).json() as { used: number }
        ).used;
      try {
        const usedBefore = await used();
        expect(usedBefore).toEqual(expect.any(Number));
        const response = await checkOn(app, tokens['UniswapV2ERC20']!);
        expect(response.status).toBe(status);
        expect(errorResponseSchema.parse(response.body).error).toBe(code);
        expect(await used()).toBe(usedBefore);
      } finally {
        await app.close();
        await node.close();
      }
    },
  );
});
