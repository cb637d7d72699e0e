/**
 * Issue 30 item 12: a handler's answer is checked against the action's output type before it is
 * answered or stored: every field's value must fit its GraphQL type (Int: a 32-bit integer, Float,
 * String, Boolean, ID, enums by value, lists element by element; custom scalars take any JSON), with
 * the nullability and extra-field checks upstream v1.3 makes. A real handler on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postGraphql, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';
import { Receiver } from '../helpers/receiver.js';

let s: TestServer;
let rx: Receiver;
let answer = '{}';

before(async () => {
  rx = await new Receiver().start();
  rx.reset(() => ({ status: 200, body: answer }));
  s = await startTestServer({ eventsFetchInterval: 100 });
  await query(s.url, {
    type: 'bulk',
    args: [
      {
        type: 'set_custom_types',
        args: {
          scalars: [{ name: 'Blob' }],
          enums: [{ name: 'Color', values: [{ value: 'RED' }, { value: 'GREEN' }] }],
          objects: [
            {
              name: 'Out',
              fields: [
                { name: 'n', type: 'Int!' },
                { name: 'f', type: 'Float' },
                { name: 's', type: 'String' },
                { name: 'b', type: 'Boolean' },
                { name: 'i', type: 'ID' },
                { name: 'c', type: 'Color' },
                { name: 'l', type: '[Int!]' },
                { name: 'blob', type: 'Blob' },
              ],
            },
          ],
        },
      },
      { type: 'create_action', args: { name: 'call', definition: { kind: 'synchronous', output_type: 'Out', handler: `${rx.url}/call` } } },
      { type: 'create_action', args: { name: 'call_async', definition: { kind: 'asynchronous', output_type: 'Out', handler: `${rx.url}/call` } } },
    ],
  });
});

after(async () => {
  await s?.close();
  await rx?.close();
});

const call = async (body: unknown) => {
  answer = JSON.stringify(body);
  return (await postGraphql(s.url, { query: 'mutation { call { n f s b i c l blob } }' })).body;
};

describe("the handler's answer against the output type", () => {
  test('values that fit are answered as they came', async () => {
    const ok = { n: 1, f: 1.5, s: 'x', b: true, i: 'abc', c: 'RED', l: [1, 2], blob: { any: ['json'] } };
    assert.deepEqual(await call(ok), { data: { call: ok } });
    assert.deepEqual(await call({ n: -2147483648, f: 3, i: 7 }), {
      data: { call: { n: -2147483648, f: 3, s: null, b: null, i: 7, c: null, l: null, blob: null } },
    });
  });

  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    ['Int! given a string', { n: 'notanint' }, /type Int! for field "n" in webhook response, but got "notanint"/],
    ['Int! given a fraction', { n: 1.5 }, /type Int! for field "n"/],
    ['Int! beyond 32 bits', { n: 2 ** 31 }, /type Int! for field "n"/],
    ['Float given a string', { n: 1, f: '1.5' }, /type Float for field "f"/],
    ['String given a number', { n: 1, s: 5 }, /type String for field "s"/],
    ['Boolean given a string', { n: 1, b: 'true' }, /type Boolean for field "b"/],
    ['ID given an object', { n: 1, i: { x: 1 } }, /type ID for field "i"/],
    ['an enum given another value', { n: 1, c: 'BLUE' }, /type Color for field "c"/],
    ['a list given a scalar', { n: 1, l: 1 }, /type \[Int!\] for field "l"/],
    ['a list with a null element', { n: 1, l: [1, null] }, /type \[Int!\] for field "l"/],
  ];
  for (const [what, body, message] of bad) {
    test(what, async () => {
      const r = await call(body);
      assert.equal(r.data, undefined, JSON.stringify(r));
      assert.equal(r.errors[0].extensions.code, 'unexpected');
      assert.match(r.errors[0].message, message);
    });
  }

  test("an asynchronous action's wrong answer is stored as its error", async () => {
    answer = JSON.stringify({ n: 'notanint' });
    const id = (await postGraphql(s.url, { query: 'mutation { call_async }' })).body.data.call_async;
    const r = await waitFor(
      "the action's outcome",
      async () => {
        const x = (await postGraphql(s.url, { query: `query { call_async(id: "${id}") { output { n } errors } }` })).body;
        return x.data?.call_async?.errors ? x : undefined;
      },
      10_000,
    );
    assert.equal(r.data.call_async.output, null);
    assert.match(r.data.call_async.errors.error, /type Int! for field "n"/);
  });
});
