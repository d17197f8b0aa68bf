import { NETWORKS } from '@meridian/networks';
import { jsonRpcErrorOf } from '@meridian/jsonrpc';
import {
  bodyTooLarge,
  gatewayHttpStatusOf,
  networkNotOffered,
  UNKNOWN_ACCESS_TOKEN,
} from './gateway-errors';

describe('gateway refusals on the JSON-RPC HTTP edge', () => {
  it('a network not offered here: 404 and -32000, told apart from a bad token (401, -32041)', () => {
    const notOffered = networkNotOffered(NETWORKS['polygon-amoy'], 'http');
    expect(gatewayHttpStatusOf(notOffered)).toBe(404);
    expect(jsonRpcErrorOf(notOffered)).toEqual({
      code: -32000,
      message: 'not found: network polygon-amoy is not offered over JSON-RPC at this endpoint',
    });
    expect(gatewayHttpStatusOf(UNKNOWN_ACCESS_TOKEN)).toBe(401);
    expect(jsonRpcErrorOf(UNKNOWN_ACCESS_TOKEN).code).toBe(-32041);
  });

  it('a body over the limit: 413 with a JSON-RPC error object (-32005)', () => {
    const error = bodyTooLarge(5 * 1024 * 1024);
    expect(gatewayHttpStatusOf(error)).toBe(413);
    expect(jsonRpcErrorOf(error)).toEqual({
      code: -32005,
      message: 'limit exceeded: the request body is larger than 5 MiB',
    });
    expect(bodyTooLarge(1000).message).toBe(
      'limit exceeded: the request body is larger than 1000 bytes',
    );
  });
});
