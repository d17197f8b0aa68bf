type Json = Record<string, unknown>;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const pretty = (value: unknown) => escapeHtml(JSON.stringify(value, null, 2));

/**
 * A self-contained HTML reference of an OpenAPI document (no script, no external asset), so it
 * works offline and under any content security policy.
 */
export function renderReferencePage(document: Json): string {
  const info = document['info'] as { title: string; version: string; description?: string };
  const paths = (document['paths'] ?? {}) as Record<string, Record<string, Json>>;
  const sections = Object.entries(paths)
    .flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, op]) => {
        const parameters = (op['parameters'] ?? []) as Array<{
          name: string;
          in: string;
          required: boolean;
          schema: unknown;
        }>;
        const body = (
          op['requestBody'] as { content: Record<string, { schema: unknown }> } | undefined
        )?.content['application/json']?.schema;
        const responses = Object.entries((op['responses'] ?? {}) as Record<string, Json>);
        const security = (op['security'] as Array<Record<string, unknown>> | undefined)?.[0];
        return `<section class="op" id="${escapeHtml(String(op['operationId']))}">
  <h2><span class="method m-${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h2>
  <p>${escapeHtml(String(op['summary'] ?? ''))}</p>
  <p class="auth">Auth: ${security ? escapeHtml(Object.keys(security).join(', ')) : 'none'}</p>
  ${
    parameters.length
      ? `<h3>Parameters</h3><table><thead><tr><th>name</th><th>in</th><th>required</th><th>schema</th></tr></thead><tbody>${parameters
          .map(
            (p) =>
              `<tr><td><code>${escapeHtml(p.name)}</code></td><td>${p.in}</td><td>${p.required ? 'yes' : 'no'}</td><td><code>${escapeHtml(JSON.stringify(p.schema))}</code></td></tr>`,
          )
          .join('')}</tbody></table>`
      : ''
  }
  ${body ? `<h3>Request body (application/json)</h3><pre>${pretty(body)}</pre>` : ''}
  <h3>Responses</h3>
  ${responses
    .map(([status, response]) => {
      const schema = (response['content'] as Record<string, { schema: unknown }> | undefined)?.[
        'application/json'
      ]?.schema;
      return `<details><summary><strong>${escapeHtml(status)}</strong> ${escapeHtml(String(response['description'] ?? ''))}</summary>${schema ? `<pre>${pretty(schema)}</pre>` : ''}</details>`;
    })
    .join('')}
</section>`;
      }),
    )
    .join('\n');
  // Schemas the operations refer to (`#/components/schemas/<name>`: recursive ones, shared ones).
  const schemas = Object.entries(
    ((document['components'] as Json | undefined)?.['schemas'] ?? {}) as Json,
  );
  const components = schemas.length
    ? `<section class="op"><h2>Schemas</h2>${schemas
        .map(
          ([name, schema]) =>
            `<details id="schema-${escapeHtml(name)}"><summary><code>#/components/schemas/${escapeHtml(name)}</code></summary><pre>${pretty(schema)}</pre></details>`,
        )
        .join('')}</section>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(info.title)} — API reference</title>
<style>
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;color:#111827;background:#f6f7f9;line-height:1.5}
main{max-width:980px;margin:0 auto;padding:24px 16px}
.op{background:#fff;border:1px solid #e2e5ea;border-radius:10px;padding:14px 18px;margin:14px 0}
h2{font-size:1.05rem;margin:0}h3{font-size:.9rem;margin:14px 0 6px}
.method{display:inline-block;min-width:64px;text-align:center;border-radius:6px;padding:2px 6px;color:#fff;font-size:.8rem}
.m-get{background:#1d4ed8}.m-post{background:#15803d}.m-put,.m-patch{background:#a16207}.m-delete{background:#b91c1c}
pre{background:#111827;color:#f9fafb;padding:10px;border-radius:8px;overflow-x:auto;font-size:.8rem}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #e2e5ea;text-align:left;padding:4px 6px;font-size:.85rem}
.auth{color:#4b5563;font-size:.85rem}
</style></head>
<body><main><h1>${escapeHtml(info.title)} <small>${escapeHtml(info.version)}</small></h1>
<p>${escapeHtml(info.description ?? '')} Machine-readable: <a href="openapi.json">openapi.json</a>.</p>
${sections}
${components}
</main></body></html>`;
}
