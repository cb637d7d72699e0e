#!/usr/bin/env node
// Transpiles src/**/*.ts to dist/ (one .js per file, ESM) with esbuild: ~0.2 s.
// Production runs the compiled JavaScript: under the tsx loader the same code
// served ~40% fewer requests per second (see README, Performance).
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) files.push(p);
  }
};
walk(join(root, 'src'));
rmSync(join(root, 'dist'), { recursive: true, force: true });
await build({
  entryPoints: files,
  outdir: join(root, 'dist'),
  outbase: join(root, 'src'),
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
});
