/**
 * Issue 30 item 11: the opt-in outbound policy (src/http/outbound.ts). With
 * `--outbound-deny-private`, action handlers, remote schemas and the auth webhook on loopback,
 * link-local (the cloud metadata address) or private addresses are refused — written as IPv4, as
 * IPv4-mapped IPv6 (`[::ffff:a9fe:a9fe]`), or as a name that resolves to one (`localhost`) — and
 * nothing reaches the receiver. With `--outbound-allow-hosts`, only the listed hosts are called
 * (and they are exempt from deny-private). Real receivers on 127.0.0.1, real PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isPrivateAddress } from '../../src/http/outbound.js';
import pg from 'pg';
import { postGraphql, postQuery, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';
import { Receiver } from '../helpers/receiver.js';
import { helloSchema } from '../fixtures/remote/schemas.js';
import { startGraphQLServer, type GraphQLTestServer } from '../fixtures/remote/server.js';

let rx: Receiver;
let remote: GraphQLTestServer;

before(async () => {
  rx = await new Receiver().start();
  rx.reset(() => ({ status: 200, body: '{"id": 1}' }));
  remote = await startGraphQLServer({ '/graphql': { schema: helloSchema() } });
});

after(async () => {
  await rx?.close();
  await remote?.close();
});

const port = () => new URL(rx.url).port;

/** Creates actions calling `handlers` (name → URL) on a server. */
async function withActions(s: TestServer, handlers: Record<string, string>): Promise<void> {
  await query(s.url, {
    type: 'bulk',
    args: [
      { type: 'set_custom_types', args: { objects: [{ name: 'Out', fields: [{ name: 'id', type: 'Int' }] }] } },
      ...Object.entries(handlers).map(([name, handler]) => ({
        type: 'create_action',
        args: { name, definition: { kind: 'synchronous', output_type: 'Out', handler } },
      })),
    ],
  });
}

test('which addresses are private', () => {
  for (const a of [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:a9fe:a9fe',
    '::ffff:169.254.169.254',
    '::ffff:7f00:1',
    '::127.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '224.0.0.1',
  ]) {
    assert.equal(isPrivateAddress(a), true, a);
  }
  for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) assert.equal(isPrivateAddress(a), false, a);
});

describe('--outbound-deny-private', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ outboundDenyPrivate: true, eventsFetchInterval: 100 });
    await withActions(s, {
      loopback: `http://127.0.0.1:${port()}/a`,
      mapped_loopback: `http://[::ffff:7f00:1]:${port()}/a`,
      metadata: 'http://[::ffff:a9fe:a9fe]/latest/meta-data/',
      metadata_v4: 'http://169.254.169.254/latest/meta-data/',
      by_name: `http://localhost:${port()}/a`,
    });
  });
  after(async () => s?.close());

  for (const name of ['loopback', 'mapped_loopback', 'metadata', 'metadata_v4', 'by_name']) {
    test(`action handler: ${name}`, async () => {
      rx.requests.splice(0);
      const r = await postGraphql(s.url, { query: `mutation { ${name} { id } }` });
      assert.equal(r.body.data, undefined, r.text);
      assert.match(JSON.stringify(r.body.errors[0].extensions.internal), /refused: (a private address|it resolves to the private address)/, r.text);
      assert.equal(rx.requests.length, 0, 'nothing reached the receiver');
    });
  }

  test('event trigger webhook: the delivery fails with the reason, nothing is sent', async () => {
    rx.requests.splice(0);
    await query(s.url, {
      type: 'bulk',
      args: [
        { type: 'run_sql', args: { sql: 'create table ev (id int primary key)' } },
        { type: 'track_table', args: { schema: 'public', name: 'ev' } },
        { type: 'create_event_trigger', args: { name: 'ev_hook', table: 'ev', webhook: `http://127.0.0.1:${port()}/ev`, insert: { columns: '*' } } },
      ],
    });
    await query(s.url, { type: 'run_sql', args: { sql: 'insert into ev values (1)' } });
    const c = new pg.Client({ connectionString: s.databaseUrl });
    await c.connect();
    try {
      const row = await waitFor(
        'the failed try to be logged',
        async () => {
          const r = await c.query(
            "select response::text as response from svc_catalog.event_invocation_logs l join svc_catalog.event_log e on e.id = l.event_id where e.trigger_name = 'ev_hook'",
          );
          return r.rows[0] as { response: string } | undefined;
        },
        10_000,
      );
      assert.match(row!.response, /refused: a private address/);
    } finally {
      await c.end();
    }
    assert.equal(rx.requests.length, 0);
  });

  test('remote schema: refused at add time, with the reason', async () => {
    remote.reset();
    const r = await postQuery(s.url, { type: 'add_remote_schema', args: { name: 'r', definition: { url: `${remote.url}/graphql` } } });
    assert.equal(r.status, 400, r.text);
    assert.match(JSON.stringify(r.body), /refused: a private address/);
    assert.equal(remote.count(), 0);
  });
});

describe('--outbound-deny-private with the auth webhook', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ outboundDenyPrivate: true, adminSecret: 'x', authHook: `${rx.url}/auth` });
  });
  after(async () => s?.close());

  test('the auth webhook on loopback is not called', async () => {
    rx.requests.splice(0);
    const r = await postGraphql(s.url, { query: '{ __typename }' }, { authorization: 'Bearer t' });
    assert.equal(r.body.data, undefined, r.text);
    assert.equal(rx.requests.length, 0);
  });
});

describe('--outbound-allow-hosts', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ outboundDenyPrivate: true, outboundAllowHosts: ['127.0.0.1'] });
    await withActions(s, { listed: `http://127.0.0.1:${port()}/a`, unlisted: `http://localhost:${port()}/a` });
  });
  after(async () => s?.close());

  test('a listed host is called (and exempt from deny-private); any other is refused', async () => {
    rx.requests.splice(0);
    assert.deepEqual((await postGraphql(s.url, { query: 'mutation { listed { id } }' })).body, { data: { listed: { id: 1 } } });
    const r = await postGraphql(s.url, { query: 'mutation { unlisted { id } }' });
    assert.match(JSON.stringify(r.body.errors[0].extensions.internal), /not in --outbound-allow-hosts/);
    assert.equal(rx.requests.length, 1);
    const added = await postQuery(s.url, { type: 'add_remote_schema', args: { name: 'r', definition: { url: `${remote.url}/graphql` } } });
    assert.equal(added.status, 200, added.text);
  });
});
