/**
 * The response pipeline every HTTP route shares — the GraphQL fast path on node:http
 * (graphqlHttp.ts) and the Fastify routes (app.ts) call the same steps, so CORS, the request id,
 * compression and the log line cannot drift apart:
 *   1. `commonHeaders`: CORS (cors.ts) and `x-request-id`;
 *   2. `acceptsGzip` / `compress`: gzip when the client accepts it;
 *   3. the error envelopes of errors.ts (`{path, error, code}` or GraphQL `errors`);
 *   4. `sendBytes`: the head and the body, as bytes;
 *   5. the `http-log` line (httpLog.ts), written once the response is sent.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { gzip } from 'node:zlib';
import { corsHeaders } from './cors.js';

/** Step 1: the headers every response carries. */
export function commonHeaders(
  req: IncomingMessage,
  allowOrigin: (origin: string | undefined) => string | undefined,
  requestId: string,
): Record<string, string> {
  const h = corsHeaders(allowOrigin(req.headers.origin), req.headers['access-control-request-headers'] as string | undefined);
  h['x-request-id'] = requestId;
  return h;
}

/** Step 2: does the client accept a gzipped body? */
export function acceptsGzip(req: IncomingMessage): boolean {
  const accept = req.headers['accept-encoding'];
  return typeof accept === 'string' && /\bgzip\b/.test(accept);
}

/** Step 2: the gzipped body (the plain one if compression fails). */
export function compress(body: string | Buffer): Promise<{ body: Buffer | string; gzipped: boolean }> {
  return new Promise((resolve) => gzip(body, (err, zipped) => resolve(err ? { body, gzipped: false } : { body: zipped, gzipped: true })));
}

/**
 * Step 4: the head and the body, a text body as its UTF-8 bytes (node:http writes a Buffer after the
 * head in one writev, where it would join a string to the head: a copy of the whole answer on the
 * JS heap per response; on the bench's 194 KB read, f_large, -19 % server CPU). Sets Content-Length;
 * returns it (bytes).
 */
export function sendBytes(res: ServerResponse, status: number, headers: OutgoingHttpHeaders, payload: string | Buffer): number {
  const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
  headers['content-length'] = bytes.length;
  res.writeHead(status, headers);
  res.end(bytes);
  return bytes.length;
}
