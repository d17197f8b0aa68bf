import {
  credsAuthenticator,
  nkeyAuthenticator,
  type NodeConnectionOptions,
} from '@nats-io/transport-node';
import { fileReadEachTime } from '@meridian/platform-config';

/** Where and as whom to connect: `NATS_URL` and the `NATS_*_FILE` settings (ADR 0506). */
export interface NatsConnectionSettings {
  /** `nats://` or `tls://`; a user and password, or a token alone, may be in it. */
  url: string;
  /** A `.creds` file: user JWT and NKEY seed. */
  credsFile?: string;
  /** A file holding an NKEY user seed. */
  nkeySeedFile?: string;
  /** TLS with a private CA and, when NATS verifies clients, a client certificate. */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

/**
 * nats.js options for the settings. nats.js reads host and port from a server URL and drops
 * its userinfo (checked against a nats-server with auth: a URL's user and password alone end in
 * "Authorization Violation"), so the user and password, or a token given as the user alone,
 * are passed as options. `tls://` or any TLS file makes TLS required (nats.js refuses a server
 * that does not offer it). The creds or seed file is read here, so a missing one fails at start,
 * and again at each connection nats.js opens (it takes a function for this), as it reads the TLS
 * files: a rotated Secret is used from the next reconnect without a restart (ADR 0506;
 * `fileReadEachTime`: a read that fails, the file mid-swap, keeps the last one).
 */
export function natsConnectOptions(settings: NatsConnectionSettings): NodeConnectionOptions {
  const url = new URL(settings.url);
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  const options: NodeConnectionOptions = { servers: `${url.protocol}//${url.host}` };
  if (user && pass) {
    options.user = user;
    options.pass = pass;
  } else if (user) {
    options.token = user;
  }
  if (settings.credsFile)
    options.authenticator = credsAuthenticator(fileReadEachTime(settings.credsFile));
  else if (settings.nkeySeedFile) {
    const seed = fileReadEachTime(settings.nkeySeedFile);
    options.authenticator = nkeyAuthenticator(() =>
      new TextEncoder().encode(seed().toString('utf8').trim()),
    );
  }
  if (settings.tls || url.protocol === 'tls:') options.tls = { ...settings.tls };
  return options;
}
