/**
 * Layers point down (README, "Layout"): every import of every file under src — static, `import
 * type`, side-effect (`import './x.js'`), re-exports and dynamic `import()` — goes to the same
 * layer or a lower one in LAYERS; none points up. Import cycles (type imports included):
 * `madge --circular` in `npm run lint`.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/**
 * Bottom first: a folder or file (the longest entry that contains it) may import its own layer and
 * those below. `model/` holds the domain types every layer shares (the metadata document, the
 * database introspection, tables/permissions/filters, actions, remote schemas) and imports nothing
 * above it. `document/` reads and writes the metadata document (argument readers, messages, export,
 * API limits, inherited roles); `metadata/` is the admin API only (ops, the registry, diff;
 * remote/ops.ts with them), and its runner (run.ts: one /v1/query request over an engine) sits
 * above the engine.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['core', 'version.ts', 'errors.ts', 'json.ts', 'env.ts'],
  ['model'],
  ['config'],
  ['http'],
  ['db'],
  ['document'],
  ['catalog'],
  ['schema', 'permissions', 'ir', 'sql', 'relay', 'rest', 'cache/directive.ts'],
  ['execute', 'cache', 'changes'],
  ['dml'],
  ['subscriptions'],
  ['background.ts', 'delivery'],
  ['events', 'scheduled'],
  ['actions', 'remote'],
  ['metadata', 'remote/ops.ts'],
  ['extensions.ts', 'engine.ts'],
  ['metadata/run.ts'],
  ['cli', 'server', 'main.ts'],
];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** every relative module specifier of a file, whatever the form of the import */
export function importsOf(text: string): string[] {
  const out: string[] = [];
  // `import … from '…'`, `import type … from '…'`, `export … from '…'` (possibly over several lines)
  for (const m of text.matchAll(/(?:^|[\n;])\s*(?:import|export)\s(?:[^'";]*?\sfrom\s*)?['"](\.[^'"]+)['"]/g)) out.push(m[1]!);
  // side-effect imports `import '…'` and dynamic `import('…')`
  for (const m of text.matchAll(/(?:^|[\n;])\s*import\s*['"](\.[^'"]+)['"]/g)) out.push(m[1]!);
  for (const m of text.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g)) out.push(m[1]!);
  return [...new Set(out)];
}

const ENTRIES = LAYERS.flatMap((l, i) => l.map((e) => ({ e: e.split('/').join(sep), i }))).sort((a, b) => b.e.length - a.e.length);
const layerOf = (rel: string) => ENTRIES.find(({ e }) => rel === e || rel.startsWith(e + sep))?.i ?? -1;

function graph(): Array<{ from: string; to: string }> {
  const edges: Array<{ from: string; to: string }> = [];
  for (const f of files(SRC)) {
    const from = relative(SRC, f);
    for (const spec of importsOf(readFileSync(f, 'utf8'))) {
      const to = relative(SRC, resolve(dirname(f), spec)).replace(/\.js$/, '.ts');
      if (!to.startsWith('..')) edges.push({ from, to });
    }
  }
  return edges;
}

test('the import reader sees every form of import', () => {
  const text = [
    "import a from './a.js';",
    "import type { B } from '../b.js';",
    "import {\n  c,\n  type D,\n} from './c.js';",
    "import './side.js';",
    "export * from './e.js';",
    "export { f } from './f.js';",
    "const g = await import('./g.js');",
    "import x from 'node:fs';",
  ].join('\n');
  assert.deepEqual(importsOf(text).sort(), ['../b.js', './a.js', './c.js', './e.js', './f.js', './g.js', './side.js'].sort());
});

test('every file of src has a layer', () => {
  assert.deepEqual(
    files(SRC)
      .map((f) => relative(SRC, f))
      .filter((r) => layerOf(r) < 0),
    [],
  );
});

test('no import points to a higher layer', () => {
  const up = graph()
    .filter((e) => layerOf(e.to) > layerOf(e.from))
    .map((e) => `${e.from} → ${e.to}`)
    .sort();
  assert.deepEqual(up, [], 'upward imports');
});

test('nothing below the HTTP edge imports from src/server; src/core imports only itself; src/model only itself and core', () => {
  const edges = graph();
  assert.deepEqual(
    edges.filter((e) => e.from.startsWith(`model${sep}`) && !e.to.startsWith(`model${sep}`) && !e.to.startsWith(`core${sep}`)),
    [],
  );
  assert.deepEqual(
    edges.filter((e) => e.to.startsWith(`server${sep}`) && !e.from.startsWith(`server${sep}`) && e.from !== 'main.ts'),
    [],
  );
  assert.deepEqual(
    edges.filter((e) => e.from.startsWith(`core${sep}`) && !e.to.startsWith(`core${sep}`)),
    [],
  );
});
