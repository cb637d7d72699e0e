/**
 * The bounded request-body reader of the raw HTTP routes (src/server/graphqlHttp.ts, src/server/rest.ts):
 * the body is collected up to `limit` bytes (--body-limit); past it the request is answered by
 * `tooLarge` once (with `connection: close` set, the rest drained unread) and `done` is never called.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcError } from '../errors.js';

export function readBoundedBody(req: IncomingMessage, res: ServerResponse, limit: number, tooLarge: (e: SvcError) => void, done: (text: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  req.on('data', (c: Buffer) => {
    if (over) return;
    size += c.length;
    if (size > limit) {
      over = true;
      res.setHeader('connection', 'close');
      tooLarge(new SvcError(413, 'payload-too-large', `request body exceeds ${limit} bytes`));
      req.resume();
      return;
    }
    chunks.push(c);
  });
  req.on('end', () => {
    if (over) return;
    done(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
  });
}
