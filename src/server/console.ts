/**
 * The web console (as upstream, when --enable-console and the metadata API are on):
 *   GET /                    302 to `console`
 *   GET /console/assets/<f>  the file <f> of the assets directory (--console-assets-dir, default
 *                            console/dist, built by `npm install`/`npm start`; see scripts/console.mjs)
 *   GET /console[/<path>]    index.html (client-side routes: the console's router reads the path)
 * Hashed file names are cached for a year (`immutable`); index.html and other names are
 * revalidated (`no-cache` + ETag). Files are read and gzipped once, and again when they change on
 * disk. The server only reads files here: nothing of the console's build tool chain is loaded.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/config.js';
import type { Logger } from '../execute/interface.js';

/** console/dist of this package (src/server and dist/server are both two levels below the root). */
export const DEFAULT_CONSOLE_ASSETS_DIR = fileURLToPath(new URL('../../console/dist', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.ttf': 'font/ttf',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.map', '.svg', '.txt', '.ttf', '.ico', '.wasm']);
/** a content hash in the file name (Vite: name-<8+ chars>.ext) makes the file immutable */
const HASHED = /-[A-Za-z0-9_-]{8,}\.[a-z0-9]+$/;

interface Cached {
  mtimeMs: number;
  size: number;
  body: Buffer;
  gzip?: Buffer;
  etag: string;
}

export function consoleEnabled(config: Config): boolean {
  return !!config.enableConsole && config.enabledApis.has('metadata');
}

export function consoleAssetsDir(config: Config): string {
  return resolve(config.consoleAssetsDir ?? DEFAULT_CONSOLE_ASSETS_DIR);
}

export function registerConsole(app: FastifyInstance, config: Config, log: Logger): void {
  if (!consoleEnabled(config)) return;
  const dir = consoleAssetsDir(config);
  const cache = new Map<string, Cached>();

  // the console works without its files only as far as saying why it is missing
  void fs.access(join(dir, 'index.html')).catch(() => {
    log.warn(
      { type: 'startup', detail: { kind: 'console', info: { console_assets_dir: dir } } },
      `console assets not found in ${dir}: build them with \`npm run build:console\` or point --console-assets-dir at them`,
    );
  });

  /** the file's bytes (and gzip), re-read when its mtime or size changed; undefined when absent */
  async function load(file: string): Promise<Cached | undefined> {
    let st;
    try {
      st = await fs.stat(file);
    } catch {
      return undefined;
    }
    if (!st.isFile()) return undefined;
    const hit = cache.get(file);
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit;
    const body = await fs.readFile(file);
    const entry: Cached = {
      mtimeMs: st.mtimeMs,
      size: st.size,
      body,
      gzip: COMPRESSIBLE.has(extname(file)) ? gzipSync(body) : undefined,
      etag: `"${createHash('sha1').update(body).digest('base64url').slice(0, 20)}"`,
    };
    cache.set(file, entry);
    return entry;
  }

  async function send(req: FastifyRequest, reply: FastifyReply, file: string, cacheControl: string): Promise<FastifyReply | undefined> {
    const f = await load(file);
    if (!f) return undefined;
    reply.header('content-type', TYPES[extname(file)] ?? 'application/octet-stream');
    reply.header('cache-control', cacheControl);
    reply.header('etag', f.etag);
    reply.header('x-content-type-options', 'nosniff');
    if (f.gzip) reply.header('vary', 'Accept-Encoding');
    if (req.headers['if-none-match'] === f.etag) return reply.code(304).send();
    const accept = req.headers['accept-encoding'];
    if (f.gzip && typeof accept === 'string' && /\bgzip\b/.test(accept)) {
      reply.header('content-encoding', 'gzip');
      return reply.code(200).send(f.gzip);
    }
    return reply.code(200).send(f.body);
  }

  const sendIndex = async (req: FastifyRequest, reply: FastifyReply) => {
    const sent = await send(req, reply, join(dir, 'index.html'), 'no-cache');
    if (sent) return sent;
    return reply
      .code(503)
      .type('text/plain; charset=utf-8')
      .send(
        `The console is enabled but its files are missing in ${dir}.\nBuild them with \`npm run build:console\` (needs the dev dependencies) or set --console-assets-dir.\n`,
      );
  };

  app.get('/', async (_req, reply) => reply.code(302).header('location', 'console').send());

  app.get('/console/assets/*', async (req, reply) => {
    const name = (req.params as { '*': string })['*'];
    const file = resolve(dir, name);
    const rel = relative(dir, file);
    // stay inside the directory; no dot files (such as the build hash)
    if (!name || rel.startsWith('..') || isAbsolute(rel) || rel.split(sep).some((p) => p.startsWith('.'))) return reply.callNotFound();
    const sent = await send(req, reply, file, HASHED.test(name) ? 'public, max-age=31536000, immutable' : 'no-cache');
    return sent ?? reply.callNotFound();
  });

  app.get('/console', sendIndex);
  app.get('/console/*', sendIndex);
}
