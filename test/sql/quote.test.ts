/**
 * quoteLiteral (src/sql/ident.ts, the one copy; src/sql/ast.ts re-exports it) against PostgreSQL:
 * every literal reads back as the value with `standard_conforming_strings` on and off. The copy
 * that only doubled quotes (the old src/sql/ident.ts, used for event-trigger SQL) read a backslash
 * as an escape with the setting off; the case below shows that difference.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { adminDatabaseUrl } from '../helpers/db.js';
import { quoteIdent, quoteLiteral } from '../../src/sql/ident.js';
import * as ast from '../../src/sql/ast.js';

const VALUES = ['', 'plain', "it's", "''", 'a\\b', '\\', 'trailing\\', "\\'", "x\\'y'z\\\\", 'tab\\tnew\\nline', 'é ü 漢字 😀', "E'x'"];

let c: pg.Client;
before(async () => {
  c = new pg.Client({ connectionString: adminDatabaseUrl() });
  await c.connect();
});
after(() => c.end());

test('one quoteLiteral and one quoteIdent: src/sql/ast.ts re-exports src/sql/ident.ts', () => {
  assert.equal(ast.quoteLiteral, quoteLiteral);
  assert.equal(ast.quoteIdent, quoteIdent);
});

for (const scs of ['on', 'off']) {
  test(`every literal reads back as its value with standard_conforming_strings ${scs}`, async () => {
    await c.query(`set standard_conforming_strings = ${scs}`);
    // escape_string_warning would log E'' hints; the value is what counts
    for (const v of VALUES) {
      const r = await c.query(`select ${quoteLiteral(v)}::text as v`);
      assert.equal(r.rows[0].v, v, `${JSON.stringify(v)} as ${quoteLiteral(v)}`);
    }
  });
}

test('doubling quotes alone is not enough with standard_conforming_strings off', async () => {
  const naive = (v: string) => `'${v.replace(/'/g, "''")}'`;
  await c.query('set standard_conforming_strings = off');
  const r = await c.query(`select ${naive('a\\tb')}::text as v`);
  assert.notEqual(r.rows[0].v, 'a\\tb');
  await c.query('set standard_conforming_strings = on');
});

test('identifiers: quotes doubled, read back as the name', async () => {
  for (const n of ['a', 'A b', 'x"y', '"', 'a\\b']) {
    const r = await c.query(`select 1 as ${quoteIdent(n)}`);
    assert.deepEqual(
      r.fields.map((f) => f.name),
      [n],
    );
  }
});
