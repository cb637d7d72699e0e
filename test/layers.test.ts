/**
 * Layers point down: the HTTP edge (src/server) may import anything; nothing below it imports
 * from src/server; src/core imports nothing of the project. (Import cycles: `madge --circular`.)
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/g)) {
    out.push(relative(SRC, resolve(dirname(file), m[1]!)));
  }
  return out;
}

test('nothing below the HTTP edge imports from src/server', () => {
  const bad: string[] = [];
  for (const f of files(SRC)) {
    const rel = relative(SRC, f);
    if (rel.startsWith('server/') || rel === 'main.ts') continue;
    for (const i of imports(f)) if (i.startsWith('server/')) bad.push(`${rel} → ${i}`);
  }
  assert.deepEqual(bad, []);
});

test('src/core imports nothing else of the project', () => {
  const bad: string[] = [];
  for (const f of files(join(SRC, 'core'))) {
    for (const i of imports(f)) if (!i.startsWith('core/')) bad.push(`${relative(SRC, f)} → ${i}`);
  }
  assert.deepEqual(bad, []);
});
