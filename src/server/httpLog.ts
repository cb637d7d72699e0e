/**
 * The `http-log` line written for every HTTP request (Hasura's shape).
 *
 * It is on the hot path (one line per request, on by default), so the line is
 * built as text and handed to the logger's destination directly, with the
 * same fields and order pino writes (`level`, `time`, …, `msg`); building it
 * through pino's object serialisation cost ~15 % of a primary-key lookup.
 */
import { randomFillSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import pino from 'pino';
import type { Session } from '../core/session.js';
import type { SvcError } from '../errors.js';
import type { Logger } from '../execute/interface.js';

export interface HttpLogEntry {
  req: IncomingMessage;
  status: number;
  /** ms from the request's arrival to the response */
  ms: number | undefined;
  requestId: string;
  failure?: SvcError;
  /** the caller, when authentication got that far: its variables are `user_vars` */
  session?: Session;
  /** bytes of the response body as sent */
  responseSize?: number;
  /** the parsed request body: logged as `query` when the request failed (never on success) */
  query?: unknown;
  /** the body as text when it was not JSON: logged as `raw_query` */
  rawQuery?: string;
}

/** hex digits as byte values (for requestIds) */
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');

/**
 * Request ids, one source per server: the client's `x-request-id` when it sent one, else a random
 * UUID (version 4, RFC 9562) from a slab of cryptographically random bytes, written digit by digit
 * into a 36-byte buffer read back as one flat string. node's randomUUID() builds the same text from
 * about twenty string concatenations that V8 then has to flatten (for the response header and the
 * log line): 3.2k instructions an id, flattened, against 2.2k here (callgrind, 100,000 ids; most of
 * what remains is drawing the random bytes), ~0.5 % of a primary-key lookup's instructions.
 */
export function requestIds(): (req: IncomingMessage) => string {
  const SLAB = 4096;
  let slab = Buffer.alloc(0);
  let at = 0;
  const text = Buffer.allocUnsafe(36);
  return (req) => {
    const sent = req.headers['x-request-id'];
    if (typeof sent === 'string' && sent !== '') return sent;
    if (at + 16 > slab.length) {
      slab = randomFillSync(Buffer.allocUnsafe(SLAB));
      at = 0;
    }
    let p = 0;
    for (let i = 0; i < 16; i++) {
      let b = slab[at + i]!;
      if (i === 6)
        b = (b & 0x0f) | 0x40; // version 4
      else if (i === 8) b = (b & 0x3f) | 0x80; // variant 10
      if (i === 4 || i === 6 || i === 8 || i === 10) text[p++] = 0x2d; // '-'
      text[p++] = HEX_DIGITS[b >> 4]!;
      text[p++] = HEX_DIGITS[b & 15]!;
    }
    at += 16;
    return text.toString('latin1', 0, 36);
  };
}

/** The body of an `http-log` line, as upstream's (deployment/logging.rst). */
export function httpLogRecord(e: HttpLogEntry): Record<string, unknown> {
  const { req, ms, failure } = e;
  return {
    type: 'http-log',
    detail: {
      operation: {
        request_id: e.requestId,
        // seconds to the µs, as the text path writes them (no 0.0018553040000000001)
        query_execution_time: ms === undefined ? undefined : Math.round(ms * 1000) / 1e6,
        user_vars: e.session?.vars ?? null,
        response_size: e.responseSize ?? null,
        error: failure ? { path: failure.path, error: failure.message, code: failure.code } : null,
        query: failure && e.query !== undefined ? e.query : null,
        ...(failure && e.rawQuery !== undefined ? { raw_query: e.rawQuery } : {}),
      },
      http_info: {
        url: req.url,
        method: req.method,
        status: e.status,
        http_version: `HTTP/${req.httpVersion}`,
        ip: req.socket.remoteAddress,
        latency_ms: ms && Math.round(ms * 100) / 100,
      },
    },
  };
}

/** the second (its first millisecond since the epoch) whose ISO text up to the seconds is `lastIso` */
let lastMs = NaN;
let lastIso = '';
/**
 * `ms` (since the epoch) as Date#toISOString writes it: the text up to the seconds formatted once
 * per second, the milliseconds appended. V8's toISOString formats through snprintf (~5k
 * instructions a call, callgrind), so once per millisecond was still once per request at a few
 * hundred requests per second.
 */
export function isoTime(ms: number): string {
  ms = Math.trunc(ms); // a Date's time value is an integer (TimeClip)
  const second = Math.floor(ms / 1000) * 1000;
  if (second !== lastMs) {
    const iso = new Date(second).toISOString(); // …T12:34:56.000Z (past year 9999: +YYYYYY-…)
    lastMs = second;
    lastIso = iso.slice(0, -4);
  }
  const milli = ms - second;
  return `${lastIso}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}
/** ISO time of now */
const isoNow = (): string => isoTime(Date.now());

const str = (v: unknown): string => (v === undefined ? 'null' : JSON.stringify(v));

/**
 * `units` / `per` (per = 10^digits) as JSON text with `digits` decimals (zeros kept): integer
 * conversions only, where `${units / per}` would format a double (~1k instructions each, two per
 * log line); from 2^31 units on (a request of 36 minutes, in µs) the double's own text, and null
 * for what is not a number
 */
export function decimal(units: number, per: number, digits: number): string {
  const n = Math.round(units);
  if (!(n >= 0 && n < 2 ** 31)) return Number.isFinite(n) ? String(n / per) : 'null';
  const whole = Math.floor(n / per);
  return `${whole}.${String(n - whole * per + per).slice(1, 1 + digits)}`;
}

/** characters a JSON string may hold unescaped (printable ASCII but `"` and `\\`) */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** JSON text of a short string that is usually plain (request ids, paths): no JSON.stringify then */
const jsonText = (v: string | undefined): string => (v === undefined ? 'null' : PLAIN.test(v) ? `"${v}"` : JSON.stringify(v));
const METHODS: Record<string, string> = {
  GET: '"GET"',
  POST: '"POST"',
  PUT: '"PUT"',
  PATCH: '"PATCH"',
  DELETE: '"DELETE"',
  OPTIONS: '"OPTIONS"',
  HEAD: '"HEAD"',
};

/** A writer of http-log lines to `log` (through pino's destination when it has one). */
export function httpLogWriter(log: Logger): (e: HttpLogEntry) => void {
  const p = log as unknown as pino.Logger;
  const stream = (p as unknown as Record<symbol, { write(s: string): unknown } | undefined>)[pino.symbols.streamSym];
  if (!stream || typeof p.isLevelEnabled !== 'function') {
    return (e) => log[e.status >= 500 ? 'error' : 'info'](httpLogRecord(e), 'request');
  }
  /** the client address as JSON text, once per connection */
  const ipJson = new WeakMap<object, string>();
  const ipOf = (req: IncomingMessage): string => {
    const sock = req.socket;
    let ip = ipJson.get(sock);
    if (ip === undefined) ipJson.set(sock, (ip = str(sock.remoteAddress)));
    return ip;
  };
  // the JSON text of the last session variables and URL seen: consecutive requests usually share them
  let lastVars: object | undefined;
  let lastVarsJson = '';
  const varsJson = (v: object): string => (v === lastVars ? lastVarsJson : ((lastVars = v), (lastVarsJson = JSON.stringify(v))));
  let lastUrl: string | undefined;
  let lastUrlJson = 'null';
  const urlJson = (u: string | undefined): string => (u === lastUrl ? lastUrlJson : ((lastUrl = u), (lastUrlJson = jsonText(u))));
  return (e) => {
    const level = e.status >= 500 ? 'error' : 'info';
    if (!p.isLevelEnabled(level)) return;
    if (e.failure) {
      // rare: let pino serialise the error's free-form text
      p[level](httpLogRecord(e), 'request');
      return;
    }
    const { req, ms } = e;
    const timing = ms === undefined ? '' : `,"query_execution_time":${decimal(ms * 1000, 1e6, 6)}`;
    const latency = ms === undefined ? '' : `,"latency_ms":${decimal(ms * 100, 100, 2)}`;
    const vars = e.session ? varsJson(e.session.vars) : 'null';
    stream.write(
      `{"level":"${level}","time":"${isoNow()}","type":"http-log","detail":{"operation":{"request_id":${jsonText(e.requestId)}${timing},` +
        `"user_vars":${vars},"response_size":${e.responseSize ?? 'null'},"error":null,"query":null},` +
        `"http_info":{"url":${urlJson(req.url)},"method":${METHODS[req.method ?? ''] ?? str(req.method)},"status":${e.status},"http_version":"HTTP/${req.httpVersion}","ip":${ipOf(req)}${latency}}},"msg":"request"}\n`,
    );
  };
}
