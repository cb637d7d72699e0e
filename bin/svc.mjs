#!/usr/bin/env node
// Runs the compiled server (dist/, built by `npm run build`), or the TypeScript
// sources through tsx when no build exists.
import { existsSync } from 'node:fs';

if (existsSync(new URL('../dist/main.js', import.meta.url))) {
  await import('../dist/main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
