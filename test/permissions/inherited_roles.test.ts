/**
 * Inherited roles (issue 36 item 1, Hasura v2's `inherited_roles`). The select matrix (rows ×
 * columns × member roles × sessions, the null-column rule, `where` on a guarded column, aggregates,
 * limits) is checked against a model written here from the rules alone — it shares no code with
 * src/. Then the GraphQL types (a column some member cannot read becomes nullable), Relay and a
 * subscription under an inherited role, the statement count (one statement per request, counted by
 * wrapping the engine's Db here), explicit permissions overriding inherited ones, insert/update/
 * delete (inherited when identical, else the change is refused as inconsistent), actions, and the
 * metadata ops: round trips and every kind of bad input (clear error, metadata unchanged).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { postGraphql, postQuery, query, startTestServer, withWorkersStopped, type TestServer } from '../helpers/server.js';

let s: TestServer;

// ---- the data ------------------------------------------------------------------------------

interface Row {
  id: number;
  owner: number;
  team: number;
  pub: boolean;
  a: string;
  b: string;
  c: string;
}
const ROWS: Row[] = [];
for (let id = 1; id <= 16; id++) {
  ROWS.push({ id, owner: (id % 3) + 1, team: (id % 4) + 1, pub: id % 5 === 0, a: `a${id % 6}`, b: `b${id}`, c: `c${id % 2}` });
}
const COLUMNS = ['id', 'owner', 'team', 'pub', 'a', 'b', 'c'] as const;
type Col = (typeof COLUMNS)[number];

// ---- the leaf roles, as the model sees them -------------------------------------------------

type Session = { user: number; team: number };
interface Leaf {
  columns: Col[];
  /** computed field `shout` (upper(a)) */
  shout: boolean;
  allows: (r: Row, s: Session) => boolean;
  limit: number | null;
  aggregations: boolean;
  /** the metadata filter */
  filter: object;
}
const LEAVES: Record<string, Leaf> = {
  owner: {
    columns: ['id', 'owner', 'a', 'b'],
    shout: true,
    allows: (r, s) => r.owner === s.user,
    limit: null,
    aggregations: false,
    filter: { owner: { _eq: 'X-Svc-User-Id' } },
  },
  team: {
    columns: ['id', 'team', 'b', 'c'],
    shout: false,
    allows: (r, s) => r.team === s.team,
    limit: 3,
    aggregations: true,
    filter: { team: { _eq: 'X-Svc-Team-Id' } },
  },
  public: { columns: ['id', 'pub', 'a'], shout: false, allows: (r) => r.pub, limit: 2, aggregations: false, filter: { pub: { _eq: true } } },
};
/** inherited role → its role set (i_all includes the inherited i_ot) */
const INHERITED: Record<string, string[]> = {
  i_ot: ['owner', 'team'],
  i_tp: ['team', 'public'],
  i_all: ['i_ot', 'public'],
  i_pub: ['public'],
};
const leavesOf = (role: string): string[] => (INHERITED[role] ? INHERITED[role]!.flatMap(leavesOf) : [role]);

/** What the role reads of the table under a session, per the documented rules. */
function model(role: string, sess: Session) {
  const leaves = [...new Set(leavesOf(role))].map((n) => LEAVES[n]!);
  const columns = COLUMNS.filter((c) => leaves.some((l) => l.columns.includes(c)));
  const visible = ROWS.filter((r) => leaves.some((l) => l.allows(r, sess)));
  const read = (r: Row, c: Col): unknown => (leaves.some((l) => l.columns.includes(c) && l.allows(r, sess)) ? r[c] : null);
  const shout = (r: Row): string | null => (leaves.some((l) => l.shout && l.allows(r, sess)) ? r.a.toUpperCase() : null);
  const limit = leaves.some((l) => l.limit === null) ? null : Math.max(...leaves.map((l) => l.limit!));
  return { columns, visible, read, shout, hasShout: leaves.some((l) => l.shout), limit, aggregations: leaves.some((l) => l.aggregations) };
}

const SESSIONS: Session[] = [
  { user: 1, team: 1 },
  { user: 2, team: 3 },
  { user: 3, team: 4 },
  { user: 9, team: 9 },
];
const headers = (role: string, sess: Session) => ({ 'x-svc-role': role, 'x-svc-user-id': String(sess.user), 'x-svc-team-id': String(sess.team) });

async function gql(role: string, sess: Session, q: string, variables?: object) {
  const r = await postGraphql(s.url, { query: q, variables }, headers(role, sess));
  assert.equal(r.status, 200, r.text);
  return r.body;
}

const SQL = `
create table item (id int primary key, owner int not null, team int not null, pub boolean not null, a text not null, b text not null, c text not null);
insert into item values ${ROWS.map((r) => `(${r.id}, ${r.owner}, ${r.team}, ${r.pub}, '${r.a}', '${r.b}', '${r.c}')`).join(', ')};
create function shout(i item) returns text language sql stable as $$ select upper(i.a) $$;
`;

const perm = (role: string, l: Leaf) => ({
  type: 'create_select_permission',
  args: {
    table: 'item',
    role,
    permission: { columns: l.columns, filter: l.filter, limit: l.limit, allow_aggregations: l.aggregations, computed_fields: l.shout ? ['shout'] : [] },
  },
});

const SETUP = [
  { type: 'run_sql', args: { sql: SQL } },
  { type: 'track_table', args: { table: 'item' } },
  { type: 'add_computed_field', args: { table: 'item', name: 'shout', definition: { function: 'shout' } } },
  ...Object.entries(LEAVES).map(([role, l]) => perm(role, l)),
  // identical delete permissions (inherited); insert only on owner (inherited: roles without one do not count)
  ...['owner', 'team'].map((role) => ({ type: 'create_delete_permission', args: { table: 'item', role, permission: { filter: { id: { _gt: 1000 } } } } })),
  {
    type: 'create_insert_permission',
    args: { table: 'item', role: 'owner', permission: { columns: ['id', 'owner', 'team', 'pub', 'a', 'b', 'c'], check: { owner: { _eq: 'X-Svc-User-Id' } } } },
  },
  { type: 'add_inherited_role', args: { role_name: 'i_ot', role_set: INHERITED.i_ot } },
  { type: 'add_inherited_role', args: { role_name: 'i_tp', role_set: INHERITED.i_tp } },
  { type: 'add_inherited_role', args: { role_name: 'i_all', role_set: INHERITED.i_all } },
  { type: 'add_inherited_role', args: { role_name: 'i_pub', role_set: INHERITED.i_pub } },
];

before(async () => {
  s = await startTestServer();
  await query(s.url, { type: 'bulk', args: SETUP });
});
after(async () => {
  await s?.close();
});

const ROLES = [...Object.keys(LEAVES), ...Object.keys(INHERITED)];

describe('select: the permission matrix against the model', () => {
  test('rows × columns × roles × sessions, the null-column rule and the limit', async () => {
    let checked = 0;
    for (const role of ROLES) {
      for (const sess of SESSIONS) {
        const m = model(role, sess);
        const fields = [...m.columns, ...(m.hasShout ? ['shout'] : [])].join(' ');
        const body = await gql(role, sess, `{ item(order_by: {id: asc}) { ${fields} } }`);
        assert.equal(body.errors, undefined, JSON.stringify(body.errors));
        const rows = m.limit === null ? m.visible : m.visible.slice(0, m.limit);
        const want = rows.map((r) => {
          const o: Record<string, unknown> = {};
          for (const c of m.columns) o[c] = m.read(r, c);
          if (m.hasShout) o.shout = m.shout(r);
          return o;
        });
        assert.deepEqual(body.data.item, want, `${role} ${JSON.stringify(sess)}`);
        checked += want.length;
      }
    }
    assert.ok(checked > 50, `the matrix compared ${checked} rows`);
  });

  test('a column the role cannot read at all is not in its schema', async () => {
    const body = await gql('i_tp', SESSIONS[0]!, '{ item { owner } }');
    assert.match(body.errors[0].message, /field "owner" not found in type: 'item'/);
  });

  test('where on a guarded column compares the value the role reads (null where hidden)', async () => {
    for (const role of ['i_ot', 'i_all', 'i_tp']) {
      for (const sess of SESSIONS) {
        const m = model(role, sess);
        for (const [cond, test] of [
          ['{a: {_eq: "a1"}}', (r: Row) => m.read(r, 'a') === 'a1'],
          ['{a: {_is_null: true}}', (r: Row) => m.read(r, 'a') === null],
          ['{_or: [{c: {_eq: "c0"}}, {b: {_like: "b1%"}}]}', (r: Row) => m.read(r, 'c') === 'c0' || String(m.read(r, 'b') ?? '').startsWith('b1')],
        ] as const) {
          if (!m.columns.includes('a') && cond.includes('a:')) continue;
          const body = await gql(role, sess, `{ item(where: ${cond}, order_by: {id: asc}) { id } }`);
          assert.equal(body.errors, undefined, JSON.stringify(body.errors));
          const rows = m.visible.filter(test);
          const want = (m.limit === null ? rows : rows.slice(0, m.limit)).map((r) => ({ id: r.id }));
          assert.deepEqual(body.data.item, want, `${role} ${JSON.stringify(sess)} ${cond}`);
        }
      }
    }
  });

  test('order_by a guarded column orders by what the role reads', async () => {
    const sess = SESSIONS[0]!;
    const m = model('i_ot', sess);
    const body = await gql('i_ot', sess, '{ item(order_by: [{a: asc_nulls_first}, {id: asc}]) { id a } }');
    const key = (r: Row) => m.read(r, 'a') as string | null;
    const want = [...m.visible]
      .sort((x, y) => (key(x) === key(y) ? x.id - y.id : key(x) === null ? -1 : key(y) === null ? 1 : key(x)! < key(y)! ? -1 : 1))
      .map((r) => ({ id: r.id, a: key(r) }));
    assert.deepEqual(body.data.item, want);
  });

  test('aggregates: allowed when any role allows them, computed over the values the role reads', async () => {
    for (const role of ROLES) {
      const sess = SESSIONS[1]!;
      const m = model(role, sess);
      const fields = m.columns.includes('a') ? 'count max { a } min { b }' : 'count';
      const body = await gql(role, sess, `{ item_aggregate { aggregate { ${fields} } } }`);
      if (!m.aggregations) {
        assert.match(body.errors[0].message, /field "item_aggregate" not found in type: 'query_root'/, role);
        continue;
      }
      assert.equal(body.errors, undefined, JSON.stringify(body.errors));
      const agg = body.data.item_aggregate.aggregate;
      assert.equal(agg.count, m.visible.length, role);
      if (m.columns.includes('a')) {
        const as = m.visible
          .map((r) => m.read(r, 'a'))
          .filter((x): x is string => x !== null)
          .sort();
        const bs = m.visible
          .map((r) => m.read(r, 'b'))
          .filter((x): x is string => x !== null)
          .sort();
        assert.equal(agg.max.a, as.length ? as[as.length - 1] : null, role);
        assert.equal(agg.min.b, bs.length ? bs[0] : null, role);
      }
    }
  });

  test('by primary key: a hidden row is null, a visible one has its guarded columns', async () => {
    const sess = SESSIONS[2]!;
    const m = model('i_all', sess);
    for (const r of ROWS) {
      const body = await gql('i_all', sess, `{ item_by_pk(id: ${r.id}) { id a b c } }`);
      const want = m.visible.includes(r) ? { id: r.id, a: m.read(r, 'a'), b: m.read(r, 'b'), c: m.read(r, 'c') } : null;
      assert.deepEqual(body.data.item_by_pk, want, `row ${r.id}`);
    }
  });

  test('/v1/query select under an inherited role agrees with the model', async () => {
    const sess = SESSIONS[0]!;
    const m = model('i_ot', sess);
    const r = await postQuery(s.url, { type: 'select', args: { table: 'item', columns: ['id', 'a', 'c'], order_by: ['id'] } }, headers('i_ot', sess));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.body,
      m.visible.map((x) => ({ id: x.id, a: m.read(x, 'a'), c: m.read(x, 'c') })),
    );
  });
});

describe('a role whose filter follows a relationship; distinct_on a guarded column', () => {
  const OPEN = new Set([2, 4]);
  before(async () => {
    await query(s.url, {
      type: 'bulk',
      args: [
        {
          type: 'run_sql',
          args: { sql: 'create table grp (id int primary key, open boolean not null); insert into grp values (1, false), (2, true), (3, false), (4, true);' },
        },
        { type: 'track_table', args: { table: 'grp' } },
        {
          type: 'create_object_relationship',
          args: { table: 'item', name: 'grp', using: { manual_configuration: { remote_table: 'grp', column_mapping: { team: 'id' } } } },
        },
        {
          type: 'create_select_permission',
          args: { table: 'item', role: 'opengrp', permission: { columns: ['id', 'c'], filter: { grp: { open: { _eq: true } } } } },
        },
        { type: 'add_inherited_role', args: { role_name: 'i_og', role_set: ['owner', 'opengrp'] } },
      ],
    });
  });
  after(async () => {
    await query(s.url, {
      type: 'bulk',
      args: [
        { type: 'drop_inherited_role', args: { role_name: 'i_og' } },
        { type: 'drop_select_permission', args: { table: 'item', role: 'opengrp' } },
        { type: 'drop_relationship', args: { table: 'item', relationship: 'grp' } },
        { type: 'untrack_table', args: { table: 'grp' } },
        { type: 'run_sql', args: { sql: 'drop table grp' } },
      ],
    });
  });

  test('rows and values as the model says, and DISTINCT ON the value the role reads', async () => {
    for (const sess of SESSIONS) {
      const visible = ROWS.filter((r) => r.owner === sess.user || OPEN.has(r.team));
      const c = (r: Row) => (OPEN.has(r.team) ? r.c : null);
      const a = (r: Row) => (r.owner === sess.user ? r.a : null);
      const all = await gql('i_og', sess, '{ item(order_by: {id: asc}) { id a c } }');
      assert.equal(all.errors, undefined, JSON.stringify(all.errors));
      assert.deepEqual(
        all.data.item,
        visible.map((r) => ({ id: r.id, a: a(r), c: c(r) })),
        JSON.stringify(sess),
      );
      const d = await gql('i_og', sess, '{ item(distinct_on: [c], order_by: [{c: asc}, {id: asc}]) { c id } }');
      assert.equal(d.errors, undefined, JSON.stringify(d.errors));
      const firsts = new Map<string | null, Row>();
      for (const r of [...visible].sort((x, y) => x.id - y.id)) if (!firsts.has(c(r))) firsts.set(c(r), r);
      const want = [...firsts.entries()]
        .sort(([x], [y]) => (x === y ? 0 : x === null ? 1 : y === null ? -1 : x < y ? -1 : 1))
        .map(([v, r]) => ({ c: v, id: r.id }));
      assert.deepEqual(d.data.item, want, JSON.stringify(sess));
    }
  });
});

describe('the GraphQL schema of an inherited role', () => {
  const typeOf = async (role: string) => {
    const body = await gql(role, SESSIONS[0]!, '{ __type(name: "item") { fields { name type { kind name ofType { name } } } } }');
    return Object.fromEntries(body.data.__type.fields.map((f: { name: string; type: { kind: string } }) => [f.name, f.type.kind]));
  };
  test('a column every role of the set reads keeps NOT NULL; the others become nullable', async () => {
    // i_ot = owner {id, owner, a, b} + team {id, team, b, c}: id and b are read by both
    assert.deepEqual(await typeOf('i_ot'), { id: 'NON_NULL', owner: 'SCALAR', team: 'SCALAR', a: 'SCALAR', b: 'NON_NULL', c: 'SCALAR', shout: 'SCALAR' });
    assert.deepEqual(await typeOf('i_all'), {
      id: 'NON_NULL',
      owner: 'SCALAR',
      team: 'SCALAR',
      pub: 'SCALAR',
      a: 'SCALAR',
      b: 'SCALAR',
      c: 'SCALAR',
      shout: 'SCALAR',
    });
    assert.deepEqual(await typeOf('owner'), { id: 'NON_NULL', owner: 'NON_NULL', a: 'NON_NULL', b: 'NON_NULL', shout: 'SCALAR' });
    // one role: nothing to guard
    assert.deepEqual(await typeOf('i_pub'), { id: 'NON_NULL', pub: 'NON_NULL', a: 'NON_NULL' });
  });
});

describe('Relay and subscriptions under an inherited role', () => {
  test('a Relay connection pages the rows the model shows, with guarded columns', async () => {
    const sess = SESSIONS[0]!;
    const m = model('i_ot', sess);
    const got: unknown[] = [];
    let after: string | null = null;
    for (let page = 0; page < 20; page++) {
      const res = await fetch(`${s.url.replace(/\/$/, '')}/v1beta1/relay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers('i_ot', sess) },
        body: JSON.stringify({
          query:
            'query($after: String) { item_connection(first: 2, after: $after, order_by: {id: asc}) { edges { cursor node { id a c } } pageInfo { hasNextPage } } }',
          variables: { after },
        }),
      });
      const body = (await res.json()) as any;
      assert.equal(body.errors, undefined, JSON.stringify(body.errors));
      const c = body.data.item_connection;
      for (const e of c.edges) got.push({ a: e.node.a, c: e.node.c, id: typeof e.node.id });
      if (!c.pageInfo.hasNextPage) break;
      after = c.edges[c.edges.length - 1].cursor;
    }
    assert.deepEqual(
      got,
      m.visible.map((x) => ({ a: m.read(x, 'a'), c: m.read(x, 'c'), id: 'string' })),
    );
  });

  test('a subscription sends the rows and values the model shows', async () => {
    const sess = SESSIONS[1]!;
    const m = model('i_all', sess);
    const client = createClient({
      url: `${s.url.replace('http', 'ws')}/v1/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { headers: headers('i_all', sess) },
      retryAttempts: 0,
    });
    try {
      const first = await new Promise<any>((resolve, reject) => {
        const stop = client.subscribe(
          { query: 'subscription { item(order_by: {id: asc}) { id a b c } }' },
          {
            next: (v) => {
              stop();
              resolve(v);
            },
            error: reject,
            complete: () => undefined,
          },
        );
      });
      assert.equal(first.errors, undefined, JSON.stringify(first.errors));
      const rows = m.limit === null ? m.visible : m.visible.slice(0, m.limit);
      assert.deepEqual(
        first.data.item,
        rows.map((r) => ({ id: r.id, a: m.read(r, 'a'), b: m.read(r, 'b'), c: m.read(r, 'c') })),
      );
    } finally {
      await client.dispose();
    }
  });
});

describe('one statement per request', () => {
  test('counted by wrapping the engine Db: the same count as a plain role, one per request', async () => {
    const db = s.engine.db as any;
    const seen: string[] = [];
    const orig = { prepared: db.prepared, query: db.query, withConn: db.withConn, tx: db.tx };
    db.prepared = function (name: string, text: string, ...rest: unknown[]) {
      seen.push(text);
      return orig.prepared.call(this, name, text, ...rest);
    };
    db.query = function (text: string, ...rest: unknown[]) {
      seen.push(text);
      return orig.query.call(this, text, ...rest);
    };
    const wrapConn = (c: any) =>
      new Proxy(c, {
        get(t, p) {
          const v = t[p];
          if (p === 'query' || p === 'prepared')
            return (...args: any[]) => {
              seen.push(String(p === 'query' ? args[0] : args[1]));
              return v.apply(t, args);
            };
          if (p === 'pipeline' || p === 'batch')
            return (stmts: Array<{ text: string }>) => {
              for (const x of stmts) seen.push(x.text);
              return v.call(t, stmts);
            };
          return typeof v === 'function' ? v.bind(t) : v;
        },
      });
    db.withConn = function (fn: (c: unknown) => Promise<unknown>) {
      return orig.withConn.call(this, (c: unknown) => fn(wrapConn(c)));
    };
    db.tx = function (fn: (c: unknown) => Promise<unknown>, o?: unknown) {
      return orig.tx.call(this, (c: unknown) => fn(wrapConn(c)), o);
    };
    try {
      const q = '{ a: item(order_by: {id: asc}) { id a b c shout } b: item_aggregate { aggregate { count max { a } } } c: item_by_pk(id: 3) { a } }';
      const sess = { user: 4242, team: 4343 };
      await gql('i_all', sess, q); // warm: the role's schema and plan
      // the background pollers share the Db: stopped while this request's statements are counted
      const { body, statements, counted } = await withWorkersStopped(s.engine, async () => {
        seen.length = 0;
        const before = s.engine.db.statementCount;
        const body = await gql('i_all', sess, q);
        return { body, statements: [...seen], counted: s.engine.db.statementCount - before };
      });
      assert.equal(body.errors, undefined);
      assert.equal(statements.length, 1, statements.join('\n---\n'));
      assert.equal(counted, 1);
      assert.match(statements[0]!, /CASE WHEN/);
      assert.doesNotMatch(statements[0]!, /4242|4343/, 'session variables are parameters');
      assert.match(statements[0]!, /\$1::json->>'x-svc-user-id'/);
    } finally {
      Object.assign(db, orig);
    }
  });
});

describe('explicit permissions override inherited ones', () => {
  test('a select permission of the inherited role itself replaces the union on that table', async () => {
    const sess = SESSIONS[0]!;
    await query(s.url, {
      type: 'create_select_permission',
      args: { table: 'item', role: 'i_pub', permission: { columns: ['id', 'c'], filter: { id: { _lt: 3 } } } },
    });
    try {
      const body = await gql('i_pub', sess, '{ item(order_by: {id: asc}) { id c } }');
      assert.deepEqual(body.data.item, [
        { id: 1, c: 'c1' },
        { id: 2, c: 'c0' },
      ]);
      // i_all includes i_ot and public, not i_pub: unchanged
    } finally {
      await query(s.url, { type: 'drop_select_permission', args: { table: 'item', role: 'i_pub' } });
    }
    const body = await gql('i_pub', sess, '{ item(order_by: {id: asc}) { id a } }');
    assert.deepEqual(
      body.data.item,
      model('i_pub', sess)
        .visible.slice(0, 2)
        .map((r) => ({ id: r.id, a: r.a })),
    );
  });

  test('an inherited role in a set contributes its own permission where it has one', async () => {
    const sess = SESSIONS[0]!;
    await query(s.url, {
      type: 'create_select_permission',
      args: { table: 'item', role: 'i_ot', permission: { columns: ['id'], filter: { id: { _eq: 1 } } } },
    });
    try {
      // i_all = {i_ot (own: row 1, id only, no limit), public (limit 2)}: no limit
      const body = await gql('i_all', sess, '{ item(order_by: {id: asc}) { id a } }');
      const want = ROWS.filter((r) => r.id === 1 || r.pub).map((r) => ({ id: r.id, a: r.pub ? r.a : null }));
      assert.deepEqual(body.data.item, want);
    } finally {
      await query(s.url, { type: 'drop_select_permission', args: { table: 'item', role: 'i_ot' } });
    }
  });
});

describe('insert, update, delete', () => {
  test('identical delete permissions are inherited; an insert only one role has is inherited', async () => {
    const body = await gql('i_ot', SESSIONS[0]!, '{ __schema { mutationType { fields { name } } } }');
    const names = body.data.__schema.mutationType.fields.map((f: { name: string }) => f.name).sort();
    assert.deepEqual(names, ['delete_item', 'delete_item_by_pk', 'insert_item', 'insert_item_one']);
    const ins = await gql(
      'i_ot',
      SESSIONS[0]!,
      'mutation { insert_item_one(object: {id: 2001, owner: 1, team: 1, pub: false, a: "x", b: "y", c: "z"}) { id } }',
    );
    assert.deepEqual(ins.data, { insert_item_one: { id: 2001 } });
    const bad = await gql(
      'i_ot',
      SESSIONS[0]!,
      'mutation { insert_item_one(object: {id: 2002, owner: 2, team: 1, pub: false, a: "x", b: "y", c: "z"}) { id } }',
    );
    assert.equal(bad.errors[0].extensions.code, 'permission-error');
    const del = await gql('i_ot', SESSIONS[0]!, 'mutation { delete_item(where: {}) { affected_rows } }');
    assert.deepEqual(del.data, { delete_item: { affected_rows: 1 } });
  });

  test('differing permissions: the change is refused as inconsistent until the inherited role defines its own', async () => {
    const before = await query(s.url, { type: 'export_metadata', args: {} });
    const upd = (role: string, columns: string[]) => ({ type: 'create_update_permission', args: { table: 'item', role, permission: { columns, filter: {} } } });
    const r = await postQuery(s.url, { type: 'bulk', args: [upd('owner', ['a']), upd('team', ['b'])] });
    assert.equal(r.status, 400, r.text);
    // the change broke another object (upstream's buildSchemaCacheFor): the reasons are in `internal`
    assert.equal(r.body.code, 'unexpected');
    assert.equal(r.body.error, 'cannot continue due to new inconsistent metadata');
    assert.match(
      r.body.internal.map((o: { reason: string }) => o.reason).join('\n'),
      /the inherited role "i_ot" cannot inherit the update permission: the update permissions of its roles "owner", "team" differ; define an update permission for "i_ot"/,
    );
    assert.deepEqual(await query(s.url, { type: 'export_metadata', args: {} }), before);
    // with its own update permission the same change is accepted (i_all includes i_ot: it needs one too)
    await query(s.url, { type: 'bulk', args: [upd('i_ot', ['c']), upd('i_all', ['c']), upd('owner', ['a']), upd('team', ['b'])] });
    const u = await gql('i_ot', SESSIONS[0]!, 'mutation { update_item(where: {id: {_eq: 1}}, _set: {c: "zz"}) { affected_rows } }');
    assert.deepEqual(u.data, { update_item: { affected_rows: 1 } });
    const denied = await gql('i_ot', SESSIONS[0]!, 'mutation { update_item(where: {id: {_eq: 1}}, _set: {a: "zz"}) { affected_rows } }');
    assert.ok(denied.errors, 'a is not updatable by i_ot');
    await query(s.url, {
      type: 'bulk',
      args: ['owner', 'team', 'i_ot', 'i_all'].map((role) => ({ type: 'drop_update_permission', args: { table: 'item', role } })),
    });
    await query(s.url, { type: 'run_sql', args: { sql: "update item set c = 'c1' where id = 1" } });
  });

  test('adding an inherited role whose roles differ: refused with the reason', async () => {
    const before = await query(s.url, { type: 'export_metadata', args: {} });
    const r = await postQuery(s.url, {
      type: 'bulk',
      args: [
        { type: 'create_update_permission', args: { table: 'item', role: 'x1', permission: { columns: ['a'], filter: {} } } },
        { type: 'create_update_permission', args: { table: 'item', role: 'x2', permission: { columns: ['b'], filter: {} } } },
        { type: 'add_inherited_role', args: { role_name: 'i_x', role_set: ['x1', 'x2'] } },
      ],
    });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.code, 'constraint-violation');
    assert.match(
      r.body.error,
      /in table "item": the inherited role "i_x" cannot inherit the update permission: the update permissions of its roles "x1", "x2" differ/,
    );
    assert.deepEqual(await query(s.url, { type: 'export_metadata', args: {} }), before);
  });
});

describe('actions', () => {
  test('an inherited role may call an action when any role of its set may', async () => {
    await query(s.url, {
      type: 'bulk',
      args: [
        { type: 'set_custom_types', args: { objects: [{ name: 'Out', fields: [{ name: 'ok', type: 'Boolean' }] }] } },
        {
          type: 'create_action',
          args: { name: 'ping', definition: { kind: 'synchronous', type: 'mutation', arguments: [], output_type: 'Out', handler: 'http://127.0.0.1:1/ping' } },
        },
        { type: 'create_action_permission', args: { action: 'ping', role: 'team' } },
      ],
    });
    const fields = async (role: string) => {
      const body = await gql(role, SESSIONS[0]!, '{ __schema { mutationType { fields { name } } } }');
      return (body.data.__schema.mutationType?.fields ?? []).map((f: { name: string }) => f.name).includes('ping');
    };
    assert.deepEqual([await fields('i_ot'), await fields('i_all'), await fields('i_pub'), await fields('owner')], [true, true, false, false]);
    await query(s.url, {
      type: 'bulk',
      args: [
        { type: 'drop_action', args: { name: 'ping' } },
        { type: 'set_custom_types', args: {} },
      ],
    });
  });
});

describe('metadata', () => {
  const exportMd = () => query(s.url, { type: 'export_metadata', args: {} });

  test('export lists inherited_roles in v2 shape; export → replace → export is exact', async () => {
    const md = await exportMd();
    assert.deepEqual(md.inherited_roles, [
      { role_name: 'i_all', role_set: ['i_ot', 'public'] },
      { role_name: 'i_ot', role_set: ['owner', 'team'] },
      { role_name: 'i_pub', role_set: ['public'] },
      { role_name: 'i_tp', role_set: ['team', 'public'] },
    ]);
    await query(s.url, { type: 'replace_metadata', args: md });
    assert.deepEqual(await exportMd(), md);
    // keys in another order come back in v2's order
    const shuffled = { ...md, inherited_roles: md.inherited_roles.map((r: any) => ({ role_set: r.role_set, role_name: r.role_name })) };
    await query(s.url, { type: 'replace_metadata', args: shuffled });
    assert.deepEqual(JSON.stringify(await exportMd()), JSON.stringify(md));
    // and the roles still work after the reload
    const body = await gql('i_ot', SESSIONS[0]!, '{ item(where: {id: {_eq: 1}}) { id } }');
    assert.equal(body.errors, undefined);
  });

  test('drop and add again', async () => {
    await query(s.url, { type: 'drop_inherited_role', args: { role_name: 'i_pub' } });
    const gone = await gql('i_pub', SESSIONS[0]!, '{ item { id } }');
    assert.ok(gone.errors);
    await query(s.url, { type: 'add_inherited_role', args: { role_name: 'i_pub', role_set: ['public'] } });
    const back = await gql('i_pub', SESSIONS[0]!, '{ item { id } }');
    assert.equal(back.errors, undefined);
  });

  const BAD: Array<[string, object, number, string, RegExp]> = [
    ['role_set missing', { type: 'add_inherited_role', args: { role_name: 'x' } }, 400, 'parse-failed', /key "role_set" not found/],
    ['role_name missing', { type: 'add_inherited_role', args: { role_set: ['owner'] } }, 400, 'parse-failed', /key "role_name" not found/],
    [
      'role_set not a list',
      { type: 'add_inherited_role', args: { role_name: 'x', role_set: 'owner' } },
      400,
      'parse-failed',
      /expected Array, but encountered String/,
    ],
    [
      'a member not a string',
      { type: 'add_inherited_role', args: { role_name: 'x', role_set: ['owner', 3] } },
      400,
      'parse-failed',
      /expected String, but encountered Number/,
    ],
    [
      'empty role_set',
      { type: 'add_inherited_role', args: { role_name: 'x', role_set: [] } },
      400,
      'invalid-params',
      /role_set of the inherited role "x" is empty/,
    ],
    ['empty name', { type: 'add_inherited_role', args: { role_name: '', role_set: ['owner'] } }, 400, 'parse-failed', /empty string not allowed/],
    [
      'itself in its set',
      { type: 'add_inherited_role', args: { role_name: 'x', role_set: ['owner', 'x'] } },
      400,
      'invalid-params',
      /an inherited role name cannot be in the role combination/,
    ],
    [
      'admin as the role',
      { type: 'add_inherited_role', args: { role_name: 'admin', role_set: ['owner'] } },
      400,
      'invalid-params',
      /"admin" role cannot be an inherited role/,
    ],
    [
      'admin in the set',
      { type: 'add_inherited_role', args: { role_name: 'x', role_set: ['admin'] } },
      400,
      'invalid-params',
      /"admin" role cannot be in the role_set/,
    ],
    [
      'a member twice',
      { type: 'add_inherited_role', args: { role_name: 'x', role_set: ['owner', 'owner'] } },
      400,
      'invalid-params',
      /the role "owner" is given twice/,
    ],
    [
      'unknown key',
      { type: 'add_inherited_role', args: { role_name: 'x', role_set: ['owner'], comment: 'c' } },
      400,
      'parse-failed',
      /unexpected key "comment"/,
    ],
    [
      'already exists',
      { type: 'add_inherited_role', args: { role_name: 'i_ot', role_set: ['owner'] } },
      400,
      'already-exists',
      /the inherited role "i_ot" already exists/,
    ],
    [
      'a cycle',
      {
        type: 'bulk',
        args: [
          { type: 'add_inherited_role', args: { role_name: 'c1', role_set: ['c2'] } },
          { type: 'add_inherited_role', args: { role_name: 'c2', role_set: ['owner', 'c1'] } },
        ],
      },
      400,
      'cyclic-dependency',
      /found cycle\(s\) in roles: \["c1","c2","c1"\]/,
    ],
    ['drop: not there', { type: 'drop_inherited_role', args: { role_name: 'nope' } }, 400, 'not-exists', /"nope" inherited role doesn't exist/],
    [
      'drop: used by another',
      { type: 'drop_inherited_role', args: { role_name: 'i_ot' } },
      400,
      'dependency-error',
      /cannot drop due to the following dependent objects : inherited role "i_all"/,
    ],
    ['drop: missing name', { type: 'drop_inherited_role', args: {} }, 400, 'parse-failed', /key "role_name" not found/],
    [
      'replace: a cycle',
      {
        type: 'replace_metadata',
        args: {
          version: 2,
          tables: [],
          inherited_roles: [
            { role_name: 'p', role_set: ['q'] },
            { role_name: 'q', role_set: ['p'] },
          ],
        },
      },
      400,
      'cyclic-dependency',
      /found cycle\(s\) in roles: \["p","q","p"\]/,
    ],
    [
      'replace: twice',
      {
        type: 'replace_metadata',
        args: {
          version: 2,
          tables: [],
          inherited_roles: [
            { role_name: 'p', role_set: ['a'] },
            { role_name: 'p', role_set: ['b'] },
          ],
        },
      },
      400,
      'already-exists',
      /the inherited role "p" is defined twice/,
    ],
    [
      'replace: not a list',
      { type: 'replace_metadata', args: { version: 2, tables: [], inherited_roles: {} } },
      400,
      'parse-failed',
      /expected Array, but encountered Object/,
    ],
    [
      'replace: bad entry',
      { type: 'replace_metadata', args: { version: 2, tables: [], inherited_roles: [{ role_name: 'p' }] } },
      400,
      'parse-failed',
      /key "role_set" not found/,
    ],
  ];
  for (const [name, body, status, code, message] of BAD) {
    test(`bad input: ${name} — a clear error, metadata unchanged`, async () => {
      const before = await exportMd();
      const r = await postQuery(s.url, body);
      assert.equal(r.status, status, r.text);
      assert.equal(r.body.code, code, r.text);
      assert.match(r.body.error, message);
      assert.deepEqual(await exportMd(), before);
    });
  }
});
