import 'reflect-metadata';
import { Controller, Get } from '@nestjs/common';
import { ApiRoute, buildOpenApiDocument } from '@meridian/platform-http/openapi';
import { z } from 'zod';
import { openApiLintErrors } from './openapi-lint';

interface Node {
  all?: Node[];
  leaf?: string;
}
const node: z.ZodType<Node> = z.lazy(() =>
  z.union([z.strictObject({ all: z.array(node) }), z.strictObject({ leaf: z.string() })]),
);

@Controller('api/v1/trees')
class TreeController {
  @Get()
  @ApiRoute({
    summary: 'A tree',
    responses: {
      200: {
        description: 'the tree',
        schema: z.strictObject({ filters: node.nullable() }).meta({ $id: 'urn:test:tree' }),
      },
      429: { description: 'rate_limited' },
    },
  })
  get() {}
}

describe('openApiLintErrors (Redocly, the resolver openapi-typescript uses)', () => {
  it('finds no error in a document the builder made of a recursive schema', async () => {
    const document = buildOpenApiDocument({ title: 'Trees', version: '1' }, [TreeController], {
      apiKeyScope: 'trees',
    });
    expect(await openApiLintErrors(document)).toEqual([]);
  });

  it('names a reference outside the components and a document without servers', async () => {
    // The layout the builder served before (QA): valid JSON Schema, unresolvable for the tools.
    const document = buildOpenApiDocument({ title: 'Trees', version: '1' }, [TreeController]);
    const { servers: _servers, ...withoutServers } = document;
    const legacy = JSON.parse(
      JSON.stringify(withoutServers).replaceAll('#/components/schemas/Filters', '#/$defs/Filters'),
    ) as Record<string, unknown>;
    const errors = await openApiLintErrors(legacy);
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^no-unresolved-refs: .*properties\/filters\/anyOf\/0\)$/),
        expect.stringMatching(/^no-empty-servers: /),
      ]),
    );
  });
});
