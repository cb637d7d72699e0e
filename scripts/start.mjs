#!/usr/bin/env node
// `npm start` after scripts/build.mjs: development defaults, then the compiled server in this process.
//  - the web console is on unless SVC_GRAPHQL_ENABLE_CONSOLE says otherwise (flags still win);
//  - its assets are rebuilt first when missing or stale (a hash check of a few ms when fresh; the
//    build itself runs in a child process so that Vite is never loaded into the server).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isFresh } from './console.mjs';

process.env.SVC_GRAPHQL_ENABLE_CONSOLE ??= 'true';
if (!isFresh()) {
  const script = fileURLToPath(new URL('./console.mjs', import.meta.url));
  const r = spawnSync(process.execPath, [script, '--optional'], { stdio: 'inherit' });
  if (r.status !== 0) process.stderr.write('svc: the console could not be built; starting without fresh console assets\n');
}
process.argv = [process.argv[0], fileURLToPath(new URL('../dist/main.js', import.meta.url)), ...process.argv.slice(2)];
await import('../dist/main.js');
