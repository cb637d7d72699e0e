/**
 * The `http-log` line written for every HTTP request (Hasura's shape).
 *
 * It is on the hot path (one line per request, on by default), so the line is
 * built as text and handed to the logger's destination directly, with the
 * same fields and order pino writes (`level`, `time`, …, `msg`); building it
 * through pino's object serialisation cost ~15 % of a primary-key lookup.
 */
import type { IncomingMessage } from 'node:http';
import pino from 'pino';
import type { SvcError } from '../errors.js';
import type { Logger } from '../execute/interface.js';

export interface HttpLogEntry {
  req: IncomingMessage;
  status: number;
  /** ms from the request's arrival to the response */
  ms: number | undefined;
  requestId: string;
  failure?: SvcError;
}

export function httpLogRecord(e: HttpLogEntry): Record<string, unknown> {
  const { req, ms, failure } = e;
  return {
    type: 'http-log',
    detail: {
      operation: {
        request_id: req.headers['x-request-id'] ?? e.requestId,
        query_execution_time: ms === undefined ? undefined : ms / 1000,
        ...(failure ? { error: { path: failure.path, error: failure.message, code: failure.code } } : {}),
      },
      http_info: { url: req.url, method: req.method, status: e.status, ip: req.socket.remoteAddress, latency_ms: ms && Math.round(ms * 100) / 100 },
    },
  };
}

let lastMs = 0;
let lastIso = '';
/** ISO time of now, formatted once per millisecond */
function isoNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}

const str = (v: unknown): string => (v === undefined ? 'null' : JSON.stringify(v));

/** A writer of http-log lines to `log` (through pino's destination when it has one). */
export function httpLogWriter(log: Logger): (e: HttpLogEntry) => void {
  const p = log as unknown as pino.Logger;
  const stream = (p as unknown as Record<symbol, { write(s: string): unknown } | undefined>)[pino.symbols.streamSym];
  if (!stream || typeof p.isLevelEnabled !== 'function') {
    return (e) => log[e.status >= 500 ? 'error' : 'info'](httpLogRecord(e), 'request');
  }
  return (e) => {
    const level = e.status >= 500 ? 'error' : 'info';
    if (!p.isLevelEnabled(level)) return;
    if (e.failure) {
      // rare: let pino serialise the error's free-form text
      p[level](httpLogRecord(e), 'request');
      return;
    }
    const { req, ms } = e;
    const id = req.headers['x-request-id'] ?? e.requestId;
    const timing = ms === undefined ? '' : `,"query_execution_time":${ms / 1000}`;
    const latency = ms === undefined ? '' : `,"latency_ms":${Math.round(ms * 100) / 100}`;
    stream.write(
      `{"level":"${level}","time":"${isoNow()}","type":"http-log","detail":{"operation":{"request_id":${str(id)}${timing}},` +
        `"http_info":{"url":${str(req.url)},"method":${str(req.method)},"status":${e.status},"ip":${str(req.socket.remoteAddress)}${latency}}},"msg":"request"}\n`,
    );
  };
}
