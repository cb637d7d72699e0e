/**
 * `svc console` (upstream: `hasura console`): serves the web console for the project directory on
 * http://<address>:<console-port>/console, in front of the server at --endpoint:
 *   GET  /console, /console/*      the console (index.html, assets from console/dist or --assets-dir)
 *   GET  /apis/project             the project the console records into (turns on its project mode)
 *   POST /apis/migrate             a change made in the console: run it, write the migration and the
 *                                  metadata files (./consoleApi.ts)
 *   anything else                  passed on to the endpoint as it is (HTTP and websockets), with
 *                                  the project's admin secret added when the browser sent none
 * The browser's credentials (x-svc-* headers, authorization) go with every request, also those
 * /apis/migrate makes: the server decides what the person may do. Listens on localhost by default.
 * Other web sites open in the same browser get nothing from it: requests naming another host
 * (DNS rebinding) are refused, the project's admin secret is added only to requests from the
 * console's own origin, and /apis/migrate takes only same-origin JSON.
 */
import { spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CommandSpec, Context } from './context.js';
import { CliError, EXIT } from './errors.js';
import { ProjectRecorder } from './consoleApi.js';
import { badEndpoint } from './messages.js';

/** console/dist of this package (src/cli and dist/cli are both two levels below the root) */
const DEFAULT_ASSETS = fileURLToPath(new URL('../../console/dist', import.meta.url));
const MAX_BODY = 64 * 1024 * 1024;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.ttf': 'font/ttf',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
};

/** headers of the browser's request that carry its credentials */
function credentials(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (typeof v !== 'string') continue;
    if (k.startsWith('x-svc-') || k === 'authorization' || k === 'cookie') out[k] = v;
  }
  return out;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((res, rej) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        rej(new Error(`request body larger than ${MAX_BODY} bytes`));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => res(Buffer.concat(chunks)));
    req.on('error', rej);
  });
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
};

export interface ConsoleServer {
  url: string;
  close(): Promise<void>;
}

export async function startConsoleServer(ctx: Context, opts: { address: string; port: number; assetsDir: string }): Promise<ConsoleServer> {
  const project = ctx.project();
  const { endpoint, adminSecret } = ctx.connection();
  let target: URL;
  try {
    target = new URL(endpoint.endsWith('/') ? endpoint : `${endpoint}/`);
  } catch {
    throw badEndpoint(endpoint);
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw badEndpoint(endpoint);
  const recorder = new ProjectRecorder(project);
  const assets = resolve(opts.assetsDir);

  const hosts = new Set(['localhost', '127.0.0.1', '[::1]', opts.address.includes(':') ? `[${opts.address}]` : opts.address]);
  /** the Host header names this server (not a rebound name of another site) */
  const knownHost = (h: IncomingHttpHeaders) => {
    const host = h.host ?? '';
    return hosts.has(host.replace(/:\d+$/, '').toLowerCase());
  };
  /** the request comes from the console's own pages (or from no page at all: curl, the CLI) */
  const sameOrigin = (h: IncomingHttpHeaders) => {
    const site = h['sec-fetch-site'];
    if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') return false;
    return h.origin === undefined || h.origin === `http://${h.host}`;
  };
  const upstreamHeaders = (h: IncomingHttpHeaders): Record<string, string | string[]> => {
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(h)) if (v !== undefined && k !== 'host' && k !== 'origin' && k !== 'referer') out[k] = v;
    out.host = target.host;
    if (adminSecret !== undefined && out['x-svc-admin-secret'] === undefined && sameOrigin(h)) out['x-svc-admin-secret'] = adminSecret;
    return out;
  };
  const upstream = (path: string, headers: Record<string, string | string[]>, method: string) => {
    const url = new URL(path.replace(/^\/+/, ''), target);
    const o = { method, headers, ...(url.protocol === 'https:' && ctx.bool('insecure-skip-tls-verify') ? { rejectUnauthorized: false } : {}) };
    return url.protocol === 'https:' ? httpsRequest(url, o) : httpRequest(url, o);
  };

  const sendFile = async (res: ServerResponse, file: string, cache: string) => {
    let body: Buffer;
    try {
      body = await fs.readFile(file);
    } catch {
      return false;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': cache, 'x-content-type-options': 'nosniff' });
    res.end(body);
    return true;
  };

  const proxy = (req: IncomingMessage, res: ServerResponse) => {
    const up = upstream(req.url ?? '/', upstreamHeaders(req.headers), req.method ?? 'GET');
    up.on('response', (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', (e) => {
      if (!res.headersSent) json(res, 502, { path: '$', error: `the console cannot reach Svc at ${endpoint}: ${e.message}`, code: 'server-unreachable' });
      else res.destroy();
    });
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        up.destroy();
        req.destroy();
      }
    });
    req.pipe(up);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (!knownHost(req.headers))
      return json(res, 403, { path: '$', error: `svc console answers requests for ${[...hosts].join(', ')} only`, code: 'forbidden-host' });
    if (path === '/apis/project' && req.method === 'GET') return json(res, 200, { ...recorder.describe(), endpoint });
    if (path === '/apis/migrate') {
      if (req.method !== 'POST') return json(res, 405, { path: '$', error: 'POST only', code: 'method-not-allowed' });
      if (!sameOrigin(req.headers)) return json(res, 403, { path: '$', error: "only the console's own pages may record changes", code: 'forbidden-origin' });
      if (!/^application\/json\b/i.test(req.headers['content-type'] ?? ''))
        return json(res, 415, { path: '$', error: 'expected content-type application/json', code: 'unsupported-media-type' });
      let body: unknown;
      try {
        body = JSON.parse((await readBody(req)).toString('utf8'));
      } catch (e) {
        return json(res, 400, { path: '$', error: `invalid json: ${(e as Error).message}`, code: 'invalid-json' });
      }
      const a = await recorder.handle(ctx.client(credentials(req.headers)), body);
      return json(res, a.status, a.body);
    }
    if (path === '/') {
      res.writeHead(302, { location: '/console' });
      return res.end();
    }
    if (path.startsWith('/console/assets/')) {
      const name = decodeURIComponent(path.slice('/console/assets/'.length));
      const file = resolve(assets, name);
      const rel = relative(assets, file);
      if (name && !rel.startsWith('..') && !isAbsolute(rel) && !rel.split(sep).some((p) => p.startsWith('.')) && (await sendFile(res, file, 'no-cache')))
        return;
      return json(res, 404, { path: '$', error: 'no such file', code: 'not-found' });
    }
    if (path === '/console' || path.startsWith('/console/')) {
      if (await sendFile(res, join(assets, 'index.html'), 'no-cache')) return;
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' });
      return res.end(`The console's files are missing in ${assets}: build them with \`npm run build:console\` or give --assets-dir.\n`);
    }
    return proxy(req, res);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: Error) => {
      if (!res.headersSent) json(res, 500, { path: '$', error: `internal error of svc console: ${e.message}`, code: 'unexpected' });
      else res.destroy();
    });
  });
  // websockets (GraphiQL's subscriptions): the upgrade is passed on, then bytes flow both ways
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    if (!knownHost(req.headers)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\n\r\n');
      return;
    }
    const up = upstream(req.url ?? '/', upstreamHeaders(req.headers), 'GET');
    up.on('upgrade', (r, upSocket, upHead) => {
      const lines = [`HTTP/1.1 ${r.statusCode ?? 101} ${r.statusMessage ?? 'Switching Protocols'}`];
      for (let i = 0; i < r.rawHeaders.length; i += 2) lines.push(`${r.rawHeaders[i]}: ${r.rawHeaders[i + 1]}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (upHead.length) socket.write(upHead);
      if (head.length) upSocket.write(head);
      upSocket.pipe(socket).pipe(upSocket);
      upSocket.on('error', () => socket.destroy());
      socket.on('error', () => upSocket.destroy());
    });
    up.on('response', (r) => {
      socket.end(`HTTP/1.1 ${r.statusCode ?? 502} ${r.statusMessage ?? ''}\r\nconnection: close\r\n\r\n`);
    });
    up.on('error', () => socket.destroy());
    up.end();
  });
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(opts.port, opts.address, () => res());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  const host = opts.address.includes(':') ? `[${opts.address}]` : opts.address;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((res) => {
        server.close(() => res());
        server.closeAllConnections();
      }),
  };
}

function openBrowser(url: string): void {
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'cmd' : 'xdg-open';
  const args = process.platform === 'win32' ? ['/c', 'start', '', url] : [url];
  try {
    const p = spawn(cmd, args, { stdio: 'ignore', detached: true });
    p.on('error', () => undefined);
    p.unref();
  } catch {
    /* no browser to open: the address is printed */
  }
}

const consoleCmd: CommandSpec = {
  path: ['console'],
  summary: 'Open the console to manage the database and record migrations',
  usage: 'svc console [flags]',
  description: [
    'Serves the web console at http://<address>:<console-port>/console in front of the server at --endpoint.',
    'Every change made in it (tables and columns, constraints, indexes, SQL run with "this is a migration"',
    'ticked) is written as a migration of the project (migrations/<version>_<name>/up.sql and down.sql, marked',
    'applied on the server), and every metadata change (tracking, relationships, permissions, triggers, …)',
    'is written into the metadata directory. The page shows what it wrote. Stop it with Ctrl+C.',
  ].join('\n'),
  examples: [
    '# Start the console for the project in the current directory:',
    'svc console',
    '',
    '# Another port, and do not open a browser:',
    'svc console --console-port 8090 --no-browser',
  ],
  flags: [
    { name: 'address', type: 'string', value: 'string', description: 'address to listen on (default "localhost")' },
    { name: 'console-port', type: 'string', value: 'string', description: 'port to serve the console on (default "9695"; 0: any free port)' },
    { name: 'no-browser', type: 'bool', description: 'do not open the console in a browser' },
    { name: 'assets-dir', type: 'string', value: 'string', description: "directory of the console's files (default: console/dist of the package)" },
  ],
  args: { min: 0, max: 0 },
  server: true,
  exits: [EXIT.PROJECT, EXIT.SERVER],
  async run(ctx) {
    const portText = ctx.flag('console-port') ?? '9695';
    if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) throw ctx.usage(`--console-port expects a port number, got ${JSON.stringify(portText)}`);
    const assetsDir = ctx.flag('assets-dir') !== undefined ? ctx.path(ctx.flag('assets-dir')!) : DEFAULT_ASSETS;
    if (!existsSync(join(assetsDir, 'index.html')))
      ctx.out.warn(`the console's files are not in ${assetsDir}: build them with \`npm run build:console\` or give --assets-dir`);
    let server: ConsoleServer;
    try {
      server = await startConsoleServer(ctx, { address: ctx.flag('address') ?? 'localhost', port: Number(portText), assetsDir });
    } catch (e) {
      if (e instanceof CliError) throw e;
      throw new CliError(EXIT.USAGE, 'listen-failed', `cannot listen on ${ctx.flag('address') ?? 'localhost'}:${portText}: ${(e as Error).message}`);
    }
    const p = ctx.project();
    const url = `${server.url}/console`;
    ctx.out.line(`console for ${relative(ctx.cwd, p.dir) || '.'} (Svc at ${ctx.connection().endpoint}): ${url}`);
    ctx.out.result({ url, project: p.dir });
    if (!ctx.bool('no-browser')) openBrowser(url);
    await new Promise<void>((res) => {
      process.once('SIGINT', res);
      process.once('SIGTERM', res);
    });
    await server.close();
    return EXIT.OK;
  },
};

export const CONSOLE_COMMANDS: CommandSpec[] = [consoleCmd];
