/**
 * /v1beta1/relay on a real server: HTTP, and the graphql-ws websocket with a live connection
 * subscription that follows inserts; the Relay root fields exist only there.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { query, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;

before(async () => {
  s = await startTestServer({ liveQueriesRefetchInterval: 50 });
  const setup = [
    { type: 'run_sql', args: { sql: 'create table note (id int primary key, body text); insert into note values (1, $$a$$), (2, $$b$$);' } },
    { type: 'track_table', args: { table: 'note' } },
  ];
  await query(s.url, { type: 'bulk', args: setup });
});

after(async () => {
  await s?.close();
});

const post = async (path: string, body: unknown) => {
  const r = await fetch(`${s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as { data?: Record<string, unknown>; errors?: Array<{ message: string }> } };
};

const Q = '{ note_connection(last: 1) { edges { cursor node { id body } } } }';
const id = (n: number) => Buffer.from(`[1, "public", "note", ${n}]`).toString('base64');

test('HTTP: the Relay schema on /v1beta1/relay only', async () => {
  const r = await post('/v1beta1/relay', { query: Q });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, {
    data: { note_connection: { edges: [{ cursor: Buffer.from('{"id" : 2}').toString('base64'), node: { id: id(2), body: 'b' } }] } },
  });
  const g = await post('/v1/graphql', { query: Q });
  assert.equal(g.body.errors?.[0]?.message, 'field "note_connection" not found in type: \'query_root\'');
  const n = await post('/v1beta1/relay', { query: `{ node(id: "${id(1)}") { id ... on note { body } } }` });
  assert.deepEqual(n.body, { data: { node: { id: id(1), body: 'a' } } });
});

test('websocket: a connection subscription follows inserts', async () => {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/v1beta1/relay`, 'graphql-ws');
  const messages: Array<{ type: string; id?: string; payload?: { data?: { note_connection: { edges: Array<{ node: { body: string } }> } } } }> = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (d) => {
    messages.push(JSON.parse(String(d)));
    for (const w of waiters.splice(0)) w();
  });
  const next = async (pred: (m: (typeof messages)[number]) => boolean) => {
    for (;;) {
      const m = messages.find(pred);
      if (m) return m;
      await new Promise<void>((res) => waiters.push(res));
    }
  };
  await new Promise((res) => ws.once('open', res));
  ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
  await next((m) => m.type === 'connection_ack');
  ws.send(JSON.stringify({ type: 'start', id: '1', payload: { query: `subscription ${Q}` } }));
  const first = await next((m) => m.type === 'data');
  assert.equal(first.payload?.data?.note_connection.edges[0]?.node.body, 'b');
  await query(s.url, { type: 'run_sql', args: { sql: 'insert into note values (3, $$c$$)' } });
  const second = await next((m) => m.type === 'data' && m.payload?.data?.note_connection.edges[0]?.node.body === 'c');
  assert.ok(second);
  ws.close();
});
