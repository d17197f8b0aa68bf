import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply } from 'fastify';

const SECURITY_HEADERS: Record<string, string> = {
  // recharts and the layout set style attributes; scripts come only from this origin.
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

/**
 * The built single-page app: its files as they are, and index.html for any other GET outside
 * /api (client-side routes). API answers keep their JSON 404. Returns false when not built.
 */
export async function serveSpa(app: NestFastifyApplication, dir: string): Promise<boolean> {
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onSend', async (_request, reply, payload) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) void reply.header(name, value);
    return payload;
  });
  if (!existsSync(join(dir, 'index.html'))) return false;
  await app.register(fastifyStatic as never, { root: dir, wildcard: false, index: false } as never);
  fastify.get('/*', async (request, raw) => {
    const reply = raw as unknown as FastifyReply;
    if (request.url.startsWith('/api/'))
      return reply
        .status(404)
        .send({ error: 'not_found', message: 'no such route', request_id: request.id });
    return reply.header('cache-control', 'no-cache').sendFile('index.html');
  });
  return true;
}
