/**
 * SQL comments `auto` without prepared statements (--use-prepared-statements=false, as behind
 * pgbouncer in transaction mode): every statement is parsed anyway, so every statement of a
 * sampled request carries the comment, fast or not. Its own process: tracing is one per process.
 * The statement's text is read back through a computed field calling current_query().
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { postGraphql, startTestServer, type TestServer } from '../helpers/server.js';
import { commentTrace, createStatementProbe } from '../helpers/sqlComment.js';
import { tracing } from '../../src/core/tracing.js';

// an OTLP receiver that accepts and drops the payloads
const otlp = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200);
    res.end();
  });
});
let s: TestServer;

before(async () => {
  await new Promise<void>((r) => otlp.listen(0, '127.0.0.1', r));
  s = await startTestServer({
    otlpEndpoint: `http://127.0.0.1:${(otlp.address() as AddressInfo).port}`,
    usePreparedStatements: false,
    tracingSqlComment: 'auto',
    tracingSqlCommentMinMs: 25,
  });
  assert.ok(tracing, 'tracing is on');
  await createStatementProbe(s.url);
});

after(async () => {
  await s?.close();
  otlp.close();
});

test('without prepared statements a fast statement keeps its comment on every run', async () => {
  for (let i = 0; i < 5; i++) {
    const r = await postGraphql(s.url, { query: '{ probe { id statement } }' });
    assert.equal(r.body.data?.probe?.[0]?.id, 1, r.text);
    const text = String(r.body.data.probe[0].statement);
    assert.equal(commentTrace(text), r.headers.get('x-svc-trace-id'), `run ${i + 1}: ${text}`);
  }
});
