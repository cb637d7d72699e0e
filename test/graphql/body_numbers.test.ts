/**
 * Numbers in request bodies are exact, as upstream's aeson reads them: a numeral a double would
 * change (9007199254740993, 12345678901234567890.123456789, 1e400) in the variables of a POST, a
 * GET's variables parameter, a websocket subscribe, a REST body, reaches the database digit for
 * digit (bigint, numeric, jsonb), an action's handler gets it as written, and keys built from
 * variables (the response cache) tell two such numbers apart. Before, bodies went through
 * JSON.parse: 9007199254740993 was inserted as 9007199254740992 and a filter on it matched the
 * neighbouring row.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { doubleKeeps, isJsonObject, jsonDeeperThan, JsonNumber, jsonText, parseJsonExact } from '../../src/json.js';
import { Receiver } from '../helpers/receiver.js';
import { post, postQuery, query, startServerWithTables, type TestServer } from '../helpers/server.js';

describe('parseJsonExact', () => {
  test('a numeral a double keeps is a number; others are JsonNumbers holding their text', () => {
    const v = parseJsonExact(
      '{"a":9007199254740993,"b":1.5,"c":[-12345678901234567890.5,1e400,1e-400,0.1,100000000000000000000000,0.000000000000000000001],"d":-0}',
    ) as Record<string, unknown>;
    assert.ok(v.a instanceof JsonNumber && v.a.text === '9007199254740993');
    assert.equal(v.b, 1.5);
    const c = v.c as unknown[];
    assert.deepEqual(
      c.map((x) => (x instanceof JsonNumber ? `=${x.text}` : x)),
      ['=-12345678901234567890.5', '=1e400', '=1e-400', 0.1, 1e23, 1e-21],
    );
    assert.ok(Object.is(v.d, -0));
  });

  test('numerals inside strings are left alone, escaped quotes and backslashes included', () => {
    const text = '{"q":"query { a(id: 12345678901234567890) } \\" 99999999999999999 \\\\","n":99999999999999999,"e":"\\u0000x:0"}';
    const v = parseJsonExact(text) as Record<string, unknown>;
    assert.equal(v.q, 'query { a(id: 12345678901234567890) } " 99999999999999999 \\');
    assert.ok(v.n instanceof JsonNumber && v.n.text === '99999999999999999');
    assert.equal(v.e, '\u0000x:0', 'a string that looks like a marker stays a string');
    assert.equal(jsonText(v), text.replace('\\u0000x:0', '\\u0000x:0'));
  });

  test('the same value as JSON.parse when no numeral needs keeping; malformed text throws', () => {
    for (const t of ['{"a":[1,2.5,-3e10,"1234567890123456789"]}', '[0.123456789012345]', '"x"', 'null', '{"a":{"b":[[]]}}']) {
      assert.deepEqual(parseJsonExact(t), JSON.parse(t), t);
    }
    for (const t of ['{"a":12345678901234567890', '{"a":12345678901234567890,}', '{"a":01234567890123456789}', '']) {
      assert.throws(() => parseJsonExact(t), SyntaxError, t);
    }
  });

  test('a numeral where a key belongs is malformed (it is not made a key)', () => {
    assert.throws(() => parseJsonExact('{12345678901234567890:1}'), SyntaxError);
    assert.throws(() => parseJsonExact('{"a":{12345678901234567890:1,"x":12345678901234567891}}'), SyntaxError);
  });

  test('linear in the length of a numeral (a body of one long numeral cannot hold the event loop)', () => {
    const long = `1${'0'.repeat(400_000)}1`;
    const t0 = performance.now();
    assert.equal(doubleKeeps(long), false);
    const v = parseJsonExact(`[${long}]`) as unknown[];
    assert.ok(v[0] instanceof JsonNumber);
    assert.ok(performance.now() - t0 < 1000, `took ${performance.now() - t0} ms (quadratic: over a minute)`);
  });

  test('a JsonNumber is not a JSON object, nor a level of nesting', () => {
    const [n] = parseJsonExact('[12345678901234567890]') as unknown[];
    assert.equal(isJsonObject(n), false);
    assert.equal(isJsonObject({}), true);
    assert.equal(jsonDeeperThan(parseJsonExact('[[12345678901234567890]]'), 2), false);
  });

  test('doubleKeeps: at most 15 significant digits within the normal range', () => {
    for (const n of ['0', '-0', '0.000', '123456789012345', '1234567890123450000', '1.5e300', '0.1', '1e-300']) assert.equal(doubleKeeps(n), true, n);
    for (const n of ['1234567890123456', '9007199254740993', '0.12345678901234567', '1e400', '1e-320', '-1e309']) assert.equal(doubleKeeps(n), false, n);
  });

  test('jsonText writes JsonNumbers as written, nested, and with a replacer', () => {
    const v = { a: new JsonNumber('9007199254740993'), b: [new JsonNumber('1e400'), { c: new JsonNumber('0.10') }], d: 'x' };
    assert.equal(jsonText(v), '{"a":9007199254740993,"b":[1e400,{"c":0.10}],"d":"x"}');
    assert.equal(
      jsonText(v, (k, x) => (k === 'd' ? 'y' : x)),
      '{"a":9007199254740993,"b":[1e400,{"c":0.10}],"d":"y"}',
    );
    assert.equal(JSON.stringify({ a: new JsonNumber('9007199254740993') }), '{"a":9007199254740992}', 'elsewhere: the nearest double');
  });
});

describe('numbers of request bodies reach the database exactly', () => {
  let s: TestServer;
  let rx: Receiver;
  before(async () => {
    rx = await new Receiver().start();
    // the row the reads look for, written by SQL: 9007199254740993 (a double reads 9007199254740992)
    s = await startServerWithTables(
      'create table body_num (id serial primary key, b bigint, n numeric, j jsonb); insert into body_num (b) values (9007199254740993)',
      ['body_num'],
    );
    await query(s.url, {
      type: 'bulk',
      args: [
        {
          type: 'set_custom_types',
          args: {
            scalars: [{ name: 'Big' }],
            objects: [
              {
                name: 'Echoed',
                fields: [
                  { name: 'ok', type: 'Boolean!' },
                  { name: 'big', type: 'Big' },
                  { name: 'id', type: 'ID' },
                ],
              },
            ],
          },
        },
        {
          type: 'create_action',
          args: {
            name: 'echo_big',
            definition: { kind: 'synchronous', arguments: [{ name: 'n', type: 'Big!' }], output_type: 'Echoed', handler: `${rx.url}/echo` },
          },
        },
      ],
    });
    rx.respond = () => ({ status: 200, body: '{"ok":true}' });
  });
  after(async () => {
    await s?.close();
    await rx?.close();
  });
  const sql = async (text: string): Promise<string[][]> => {
    const r = await postQuery(s.url, { type: 'run_sql', args: { sql: text } });
    assert.equal(r.status, 200, r.text);
    return r.body.result.slice(1);
  };
  /** a POST /v1/graphql whose body is sent as written */
  const raw = async (body: string, path = '/v1/graphql') => {
    const r = await post(s.url, path, body);
    assert.equal(r.status, 200, r.text);
    return r;
  };
  const BY_B = 'query ($b: bigint!) { body_num(where: {b: {_eq: $b}}) { id b } }';

  test('variables of a POST: bigint, numeric and jsonb inserted digit for digit; filters match exactly', async () => {
    const r = await raw(
      `{"query":"mutation ($b: bigint!, $n: numeric!, $j: jsonb!) { insert_body_num_one(object: {b: $b, n: $n, j: $j}) { id } }",` +
        `"variables":{"b":9007199254740995,"n":12345678901234567890.123456789,"j":{"a":9007199254740995,"b":[1e400,0.10000000000000000001]}}}`,
    );
    assert.ok(r.body.data?.insert_body_num_one?.id, r.text);
    assert.deepEqual(await sql("select b::text, n::text, j->>'a', j#>>'{b,0}', j#>>'{b,1}' from body_num where j is not null"), [
      ['9007199254740995', '12345678901234567890.123456789', '9007199254740995', '1' + '0'.repeat(400), '0.10000000000000000001'],
    ]);
    const hit = await raw(`{"query":${JSON.stringify(BY_B)},"variables":{"b":9007199254740993}}`);
    assert.match(hit.text, /"b":9007199254740993\b/, hit.text);
    const near = await raw(`{"query":${JSON.stringify(BY_B)},"variables":{"b":9007199254740992}}`);
    assert.deepEqual(near.body, { data: { body_num: [] } }, 'the neighbouring double is another value');
  });

  test('an Int variable past its bounds is refused naming the number as written', async () => {
    const r = await raw('{"query":"query ($n: Int!) { body_num(limit: $n) { id } }","variables":{"n":12345678901234567890}}');
    assert.equal(r.body.errors?.[0]?.extensions?.code, 'parse-failed', r.text);
    assert.match(r.body.errors[0].message, /12345678901234567890/);
  });

  test("a GET's variables parameter", async () => {
    const url = `${s.url}/v1/graphql?query=${encodeURIComponent(BY_B)}&variables=${encodeURIComponent('{"b":9007199254740993}')}`;
    const r = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    const text = await r.text();
    assert.equal(r.status, 200, text);
    assert.match(text, /"body_num":\[\{"id":\d+,"b":9007199254740993\}\]/);
  });

  test('the response cache keys two such numbers apart', async () => {
    const q = JSON.stringify(BY_B.replace('query (', 'query Cached (').replace(') {', ') @cached(ttl: 60) {'));
    const first = await raw(`{"query":${q},"variables":{"b":9007199254740993}}`);
    assert.equal(first.body.data.body_num.length, 1, first.text);
    const other = await raw(`{"query":${q},"variables":{"b":9007199254740992}}`);
    assert.deepEqual(other.body, { data: { body_num: [] } }, `not the first one's entry: ${other.headers.get('x-svc-query-cache')}`);
    const again = await raw(`{"query":${q},"variables":{"b":9007199254740993}}`);
    assert.equal(again.body.data.body_num.length, 1, again.text);
  });

  test("an action's handler gets the number as written, and its answer reaches the client as written", async () => {
    rx.reset(() => ({ status: 200, body: '{"ok":true,"big":98765432109876543210.5,"id":9007199254740993}' }));
    const r = await raw('{"query":"mutation ($n: Big!) { echo_big(n: $n) { ok big id } }","variables":{"n":123456789012345678901234567890}}');
    assert.equal(r.text, '{"data":{"echo_big":{"ok":true,"big":98765432109876543210.5,"id":9007199254740993}}}');
    const [got] = await rx.waitFor(1);
    assert.match(got!.raw, /"input":\{"n":123456789012345678901234567890\}/, got!.raw);
  });

  test('/v1/query data operations: insert, select and update take and answer numbers digit for digit', async () => {
    const ins = await post(
      s.url,
      '/v1/query',
      '{"type":"bulk","args":[{"type":"insert","args":{"table":"body_num","objects":[{"b":9007199254740997,"n":0.12345678901234567890123}],"returning":["b","n"]}},' +
        '{"type":"select","args":{"table":"body_num","columns":["b"],"where":{"b":{"$eq":9007199254740993}}}}]}',
    );
    assert.equal(ins.status, 200, ins.text);
    // numeric as upstream's binary input scales it (decimals in fours: …901230), digit for digit
    assert.equal(ins.text, '[{"affected_rows":1,"returning":[{"b":9007199254740997,"n":0.123456789012345678901230}]},[{"b":9007199254740993}]]');
    const upd = await post(
      s.url,
      '/v1/query',
      '{"type":"update","args":{"table":"body_num","where":{"b":{"$eq":9007199254740997}},"$set":{"b":9007199254740999}}}',
    );
    assert.equal(upd.text, '{"affected_rows":1}');
    assert.deepEqual(await sql('select b::text from body_num where b > 9007199254740995'), [['9007199254740999']]);
    const count = await post(s.url, '/v1/query', '{"type":"count","args":{"table":"body_num","where":{"b":{"$eq":9007199254740998}}}}');
    assert.equal(count.text, '{"count":0}', 'the neighbouring double is another value');
  });

  test('/v1/query: a numeral kept exact is a value, never an operator object or a row', async () => {
    // `where: {b: <numeral>}` is `b = numeral`: before, a JsonNumber passed as an empty operator
    // object (no condition), and this delete emptied the table
    const before = (await sql('select count(*) from body_num'))[0]![0];
    const del = await post(s.url, '/v1/query', '{"type":"delete","args":{"table":"body_num","where":{"b":9007199254740998}}}');
    assert.equal(del.text, '{"affected_rows":0}');
    assert.equal((await sql('select count(*) from body_num'))[0]![0], before);
    const sel = await post(s.url, '/v1/query', '{"type":"select","args":{"table":"body_num","columns":["b"],"where":{"b":9007199254740993}}}');
    assert.equal(sel.text, '[{"b":9007199254740993}]');
    const row = await post(s.url, '/v1/query', '{"type":"insert","args":{"table":"body_num","objects":[12345678901234567890]}}');
    assert.equal(row.status, 400, row.text);
    assert.equal(row.body.code, 'parse-failed', row.text);
    const vars = await raw('{"query":"{ body_num { id } }","variables":12345678901234567890}');
    assert.equal(vars.body.errors?.[0]?.extensions?.path, '$.variables', vars.text);
  });

  test('/v1/query: a numeral past numeric range is refused by PostgreSQL, not written out in full', async () => {
    const r = await post(s.url, '/v1/query', '{"type":"insert","args":{"table":"body_num","objects":[{"n":1e1000000000}]}}');
    assert.equal(r.status, 400, r.text);
    const g = await raw('{"query":"mutation ($n: numeric) { insert_body_num_one(object: {n: $n}) { id } }","variables":{"n":-1e1000000000}}');
    assert.ok(g.body.errors?.length, g.text);
  });

  test('metadata operations still read numbers as doubles', async () => {
    const r = await post(
      s.url,
      '/v1/query',
      '{"type":"create_select_permission","args":{"table":"body_num","role":"reader","permission":{"columns":["id"],"filter":{"b":{"_gt":9007199254740993}},"limit":100000000000000000000}}}',
    );
    assert.equal(r.status, 200, r.text);
    const md = await query(s.url, { type: 'export_metadata', args: {} });
    const perm = md.tables.find((t: any) => t.table.name === 'body_num').select_permissions[0];
    assert.deepEqual(perm.permission.filter, { b: { _gt: 9007199254740992 } });
    // an operation that is not DML (here of kind data too) reads its numbers as doubles
    const ev = await post(
      s.url,
      '/v1/query',
      `{"type":"create_scheduled_event","args":{"webhook":"${rx.url}/ev","schedule_at":"2099-01-01T00:00:00Z","retry_conf":{"num_retries":3.0000000000000001}}}`,
    );
    assert.equal(ev.status, 200, ev.text);
  });

  test('a graphql-transport-ws subscribe', async () => {
    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/v1/graphql`, 'graphql-transport-ws');
    const frames: any[] = [];
    const waiters: Array<() => void> = [];
    ws.on('message', (d) => {
      frames.push(JSON.parse(String(d)));
      waiters.splice(0).forEach((w) => w());
    });
    const next = async (type: string) => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const f = frames.find((x) => x.type === type);
        if (f) return f;
        if (Date.now() > deadline) throw new Error(`no ${type} frame: ${JSON.stringify(frames)}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200).unref();
        });
      }
    };
    try {
      await new Promise((r, j) => ws.once('open', r).once('error', j));
      ws.send('{"type":"connection_init","payload":{}}');
      await next('connection_ack');
      ws.send(`{"id":"1","type":"subscribe","payload":{"query":${JSON.stringify(BY_B.replace('query', 'subscription'))},"variables":{"b":9007199254740993}}}`);
      const f = await next('next');
      assert.equal(f.payload.data.body_num.length, 1, JSON.stringify(f));
    } finally {
      ws.close();
    }
  });
});
