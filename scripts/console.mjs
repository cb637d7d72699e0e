#!/usr/bin/env node
// Builds the web console (console/ → console/dist) with Vite.
//
//   node scripts/console.mjs             build unless console/dist is up to date
//   node scripts/console.mjs --force     always build
//   node scripts/console.mjs --optional  when Vite is not installed (npm install --omit=dev), warn
//                                        and exit 0 instead of failing
//
// "Up to date" means console/dist/.build-hash holds the hash of the inputs: every file under
// console/ (except dist), package-lock.json and this script. Checking it reads a few dozen small
// files (a few ms), so `npm start` and the browser test can call it every time. The server never
// imports this file or Vite: it only serves the files in console/dist.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CONSOLE_DIR = join(ROOT, 'console');
export const OUT_DIR = join(CONSOLE_DIR, 'dist');
const HASH_FILE = join(OUT_DIR, '.build-hash');

function inputFiles() {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) {
        if (p !== OUT_DIR && name !== 'node_modules') walk(p);
      } else out.push(p);
    }
  };
  walk(CONSOLE_DIR);
  out.push(join(ROOT, 'package-lock.json'), fileURLToPath(import.meta.url));
  return out;
}

/** sha256 over the names and contents of the console's build inputs. */
export function inputsHash() {
  const h = createHash('sha256');
  for (const f of inputFiles()) {
    h.update(relative(ROOT, f)).update('\0');
    if (existsSync(f)) h.update(readFileSync(f));
    h.update('\0');
  }
  return h.digest('hex');
}

/** true when console/dist was built from the current inputs */
export function isFresh() {
  try {
    return existsSync(join(OUT_DIR, 'index.html')) && readFileSync(HASH_FILE, 'utf8').trim() === inputsHash();
  } catch {
    return false;
  }
}

export async function buildConsole({ force = false, optional = false, quiet = false } = {}) {
  if (!force && isFresh()) return 'fresh';
  const hash = inputsHash();
  let vite;
  try {
    vite = await import('vite');
  } catch {
    const msg = 'svc: console assets not built: Vite is not installed (install dev dependencies: npm install)';
    if (optional) {
      process.stderr.write(`${msg}\n`);
      return 'skipped';
    }
    throw new Error(msg);
  }
  const started = Date.now();
  if (!quiet) process.stderr.write('svc: building the console (console/ → console/dist)...\n');
  await vite.build({ configFile: join(CONSOLE_DIR, 'vite.config.mjs'), logLevel: 'warn' });
  writeFileSync(HASH_FILE, `${hash}\n`);
  if (!quiet) process.stderr.write(`svc: console built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return 'built';
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = new Set(process.argv.slice(2));
  buildConsole({ force: args.has('--force'), optional: args.has('--optional'), quiet: args.has('--quiet') }).catch((e) => {
    process.stderr.write(`svc: console build failed: ${e?.stack ?? e}\n`);
    process.exit(1);
  });
}
