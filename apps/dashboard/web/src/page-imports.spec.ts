import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The page runs in a browser: what it bundles of the workspace's libraries must be pure, and it
 * reaches them only through vite.config.mts's aliases (the rule's one home, never a copy). Jest
 * and tsc resolve every tsconfig path, so a page module importing a lib's node-only index (the
 * one of @meridian/webhooks needs node:crypto) would pass its unit tests and typecheck; this
 * walks the page's import graph instead.
 */
const web = resolve(__dirname, '..');
const root = resolve(web, '../../..');
const tsPaths: Record<string, string[]> = JSON.parse(
  readFileSync(join(root, 'tsconfig.base.json'), 'utf8'),
).compilerOptions.paths;
const viteAliases = new Map(
  [
    ...readFileSync(join(web, 'vite.config.mts'), 'utf8').matchAll(
      /'(@meridian\/[^']+)':\s*fileURLToPath\(\s*new URL\('([^']+)'/g,
    ),
  ].map(([, name, target]) => [name!, resolve(web, target!)]),
);
const builtins = new Set(builtinModules);

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourcesUnder(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The module specifiers a file loads at run time (type-only imports and exports are erased). */
function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly)
      out.push((node.moduleSpecifier as ts.StringLiteral).text);
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier && !node.isTypeOnly)
      out.push((node.moduleSpecifier as ts.StringLiteral).text);
    else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    )
      out.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

function resolveRelative(from: string, specifier: string): string {
  const base = resolve(dirname(from), specifier);
  const found = [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find(
    (p) => existsSync(p) && statSync(p).isFile(),
  );
  if (!found) throw new Error(`${relative(root, from)}: cannot resolve ${specifier}`);
  return found;
}

/** Every problem of the page's import graph, as "<file>: <what>". */
function pageImportProblems(): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const queue = sourcesUnder(join(web, 'src'));
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const at = relative(root, file);
    for (const specifier of runtimeImports(file)) {
      if (specifier.startsWith('.')) queue.push(resolveRelative(file, specifier));
      else if (specifier.startsWith('node:') || builtins.has(specifier.split('/')[0]!))
        problems.push(`${at}: imports ${specifier}, a Node module`);
      else if (specifier.startsWith('@meridian/')) {
        const target = viteAliases.get(specifier);
        if (target === undefined)
          problems.push(`${at}: imports ${specifier}, which vite.config.mts does not alias`);
        else queue.push(target);
      }
    }
  }
  return problems;
}

describe("the dashboard page's imports", () => {
  it('alias each lib entry to the file tsconfig.base.json names for it', () => {
    expect(viteAliases.size).toBeGreaterThan(0);
    for (const [name, target] of viteAliases)
      expect([name, relative(root, target)]).toEqual([name, tsPaths[name]?.[0]]);
  });

  it('bundle no Node module and reach the libraries only through those aliases', () => {
    expect(pageImportProblems()).toEqual([]);
  });

  it('take the webhook field bounds from their home, not the lib index that needs node:crypto', () => {
    expect(runtimeImports(join(web, 'src/webhook-checks.ts'))).toContain(
      '@meridian/webhooks/bounds',
    );
    expect(runtimeImports(join(root, tsPaths['@meridian/webhooks/bounds']![0]!))).toEqual([]);
  });
});
