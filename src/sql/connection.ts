/**
 * Relay connections (IR `ConnectionSelect`) → one SQL expression building the
 * connection's JSON. Paging is keyset: the cursor holds the row's order-by
 * values (primary key included), `after`/`before` become a comparison on them
 * (a row comparison `(a, b) > ($1, $2)` when it can, which an index serves),
 * and `first`/`last` a LIMIT. Nothing scans from the start:
 *
 *   (SELECT json_build_object('pageInfo', …, 'edges', json_agg("e"))
 *    FROM (SELECT <cursor text> AS "k0", <node fields> AS "k1"…
 *          FROM <source> WHERE <permission> AND <where> AND <keyset> ORDER BY <order> LIMIT n) AS "p"
 *    CROSS JOIN LATERAL (SELECT <base64 of k0> AS "cursor", "n" AS "node"
 *                        FROM (SELECT "p"."k1" AS "id", …) AS "n") AS "e")
 *
 * `last` reads the order backwards and the edges are put back in order. The
 * page info is computed only when asked for: more rows in reading order
 * (hasNextPage of `first`, hasPreviousPage of `last`) is one row read beyond
 * the page (LIMIT n + 1, the edges cut to n); rows on the far side of the cursor
 * (hasPreviousPage after `after`, hasNextPage before `before`) one `EXISTS`
 * with the cursor comparison turned around, as upstream reports it: only for
 * a non-empty page.
 */
import type { ConnectionSelect, CursorItem, EdgeField, Field, OrderByItem, OrderByTarget, PageInfoField, SelectBase, SelectSource } from '../ir/types.js';
import type { TableModel } from '../model/tables.js';
import { ident, join, quoteLiteral, raw, sql, type Sql } from './ast.js';
import { andSql, col, guardedCol, orSql, valueSql, type Aliases } from './boolexp.js';
import { jsonOutput } from './pgtypes.js';
import type { PgType } from '../model/values.js';

/** What the connection compiler uses of the select compiler (sql/select.ts). */
export interface ConnectionHost<P> {
  readonly aliases: Aliases;
  from(src: SelectSource, alias: string, parent?: P): Sql;
  conditions(sel: SelectBase, alias: string, parent?: P): Sql[];
  distinct(sel: SelectBase, alias: string): Sql;
  orderTarget(t: OrderByTarget, alias: string): Sql;
  orderItem(o: OrderByItem, alias: string): Sql;
  fieldExpr(f: Field, alias: string): Sql;
  objectExpr(pairs: Array<[string, Sql]>): Sql;
}

const NO_STRINGIFY = { stringifyNumerics: false };

/**
 * base64 of a value's JSON text, without the line breaks PostgreSQL's encoder puts every 76
 * characters. `maxBytes`: an upper bound of the JSON's length, when known; 57 bytes or less make
 * at most 76 characters, which need no `translate`.
 */
export function base64Json(json: Sql, maxBytes = Infinity): Sql {
  const encoded = sql`encode(convert_to((${json})::text, 'UTF8'), 'base64')`;
  return maxBytes <= 57 ? encoded : sql`translate(${encoded}, chr(10), '')`;
}

/** the longest JSON text of a value of a column type (Infinity: unbounded or unknown) */
const MAX_JSON_BYTES: Record<string, number> = { int2: 6, int4: 11, int8: 20, bool: 5 };
const maxJsonBytes = (typname: string) => MAX_JSON_BYTES[typname] ?? Infinity;
const jsonStringBytes = (s: string) => Buffer.byteLength(JSON.stringify(s));

/** types whose text output is their JSON text (integers, booleans) */
const JSON_AS_TEXT = new Set(['int2', 'int4', 'int8', 'bool']);

/**
 * The JSON text of a value as `json_build_object`/`to_json` print it (`null` for NULL), built as
 * text: ids and cursors are base64 of such texts, and concatenating them costs PostgreSQL about
 * half of building a json value and casting it.
 */
function jsonValueText(expr: Sql, type: PgType, notNull: boolean, columnValue = true): Sql {
  if (type.schema === 'pg_catalog' && JSON_AS_TEXT.has(type.name)) return notNull ? sql`(${expr})::text` : sql`coalesce((${expr})::text, 'null')`;
  const text = sql`to_json(${columnValue ? jsonOutput(expr, type, NO_STRINGIFY) : expr})::text`;
  return notNull ? text : sql`coalesce(${text}, 'null')`;
}

/** A SQL string literal of a JSON string (PostgreSQL's escape_json and JSON.stringify agree). */
const jsonStringLiteral = (s: string) => JSON.stringify(s);

/** `'a' || x || 'b'…` from literal texts and SQL text values, adjacent literals merged */
function concatText(parts: Array<string | Sql>): Sql {
  const merged: Array<string | Sql> = [];
  for (const p of parts) {
    const prev = merged[merged.length - 1];
    if (typeof p === 'string' && typeof prev === 'string') merged[merged.length - 1] = prev + p;
    else merged.push(p);
  }
  return sql`(${join(
    merged.map((p) => (typeof p === 'string' ? raw(quoteLiteral(p)) : p)),
    ' || ',
  )})`;
}

/**
 * The Relay global id of the row at `alias`: base64 of `[1, "schema", "table", pk…]` exactly as
 * PostgreSQL's json_build_array prints it (", " between elements), as upstream's ids are.
 */
export function nodeIdSql(t: TableModel, alias: string): Sql {
  const cols = (t.primaryKey ?? []).map((n) => t.columnsByName.get(n)!);
  const parts: Array<string | Sql> = [`[1, ${jsonStringLiteral(t.name.schema)}, ${jsonStringLiteral(t.name.name)}`];
  for (const c of cols) parts.push(', ', jsonValueText(col(alias, c.name), { name: c.type, schema: c.typeSchema }, !c.nullable));
  parts.push(']');
  const max = 3 + 3 * 2 + jsonStringBytes(t.name.schema) + jsonStringBytes(t.name.name) + cols.reduce((n, c) => n + 2 + maxJsonBytes(c.type), 0);
  return base64Json(concatText(parts), max);
}

const flip = (o: OrderByItem): OrderByItem => ({ ...o, dir: o.dir === 'asc' ? 'desc' : 'asc', nulls: o.nulls === 'first' ? 'last' : 'first' });

interface Key {
  expr: Sql;
  item: OrderByItem;
  /** the cursor's value (null: the cursor holds null) */
  value: Sql | null;
  notNull: boolean;
}

const opSql = (op: string, orEqual: boolean): Sql => raw(orEqual ? `${op}=` : op);

/**
 * Rows that sort after the cursor in the order of `keys` (`inclusive`: or are
 * the cursor's row). Null-aware: NULLS FIRST/LAST decide where nulls sort.
 */
function keysetAfter(keys: Key[], inclusive: boolean): Sql {
  const op = (k: Key) => (k.item.dir === 'asc' ? '>' : '<');
  const simple = keys.every((k) => k.notNull && k.value !== null && k.item.dir === keys[0]!.item.dir);
  if (simple) {
    const o = opSql(op(keys[0]!), inclusive);
    if (keys.length === 1) return sql`(${keys[0]!.expr}) ${o} ${keys[0]!.value!}`;
    const lhs = join(
      keys.map((k) => sql`(${k.expr})`),
      ', ',
    );
    const rhs = join(
      keys.map((k) => k.value!),
      ', ',
    );
    return sql`(${lhs}) ${o} (${rhs})`;
  }
  const gt = (k: Key): Sql => {
    const nullsAfter = k.item.nulls === 'last';
    if (k.value === null) return nullsAfter ? raw('false') : k.notNull ? raw('true') : sql`(${k.expr}) IS NOT NULL`;
    const strict = sql`(${k.expr}) ${raw(op(k))} ${k.value}`;
    return nullsAfter && !k.notNull ? sql`(${strict} OR (${k.expr}) IS NULL)` : strict;
  };
  const eq = (k: Key): Sql => (k.value === null ? (k.notNull ? raw('false') : sql`(${k.expr}) IS NULL`) : sql`(${k.expr}) = ${k.value}`);
  const alts: Sql[] = keys.map((k, i) => andSql([...keys.slice(0, i).map(eq), gt(k)]));
  if (inclusive) alts.push(andSql(keys.map(eq)));
  const first = keys[0]!;
  // a bound on the leading key alone lets an index on it narrow the scan
  if (first.notNull && first.value !== null) return andSql([sql`(${first.expr}) ${opSql(op(first), true)} ${first.value}`, orSql(alts)]);
  return orSql(alts);
}

/** an upper bound of a cursor's JSON length: `{"a" : 1, "b" : 2}` (plain columns only) */
function cursorMaxBytes(items: CursorItem[]): number {
  if (items.some((i) => i.path.length !== 1)) return Infinity;
  return 2 + items.reduce((n, i) => n + jsonStringBytes(i.path[0]!) + 3 + maxJsonBytes(i.type.name) + 2, 0);
}

/**
 * The cursor of a row as JSON text: the order-by values at their paths, printed as
 * json_build_object prints (`{"author" : {"name" : …}, "id" : 1}`). Items through the same
 * relationship share its object (upstream repeats the key instead).
 */
export function cursorText(items: CursorItem[], keys: Sql[]): Sql {
  type Tree = Map<string, Tree | Sql>;
  const root: Tree = new Map();
  items.forEach((it, i) => {
    let node = root;
    it.path.slice(0, -1).forEach((k) => {
      const next = node.get(k);
      if (next instanceof Map) node = next;
      else {
        const m: Tree = new Map();
        node.set(k, m);
        node = m;
      }
    });
    const t = it.item.target;
    const notNull = (t.kind === 'column' && !t.column.nullable) || (t.kind === 'aggregate' && t.agg.kind === 'count');
    node.set(it.path[it.path.length - 1]!, jsonValueText(keys[i]!, it.type, notNull, t.kind === 'column'));
  });
  const parts: Array<string | Sql> = [];
  const build = (t: Tree) => {
    parts.push('{');
    [...t].forEach(([k, v], i) => {
      parts.push(`${i ? ', ' : ''}${jsonStringLiteral(k)} : `);
      if (v instanceof Map) build(v);
      else parts.push(v);
    });
    parts.push('}');
  };
  build(root);
  return concatText(parts);
}

export function connectionSql<P>(h: ConnectionHost<P>, sel: ConnectionSelect, parent?: P): Sql {
  const last = sel.slice?.kind === 'last';
  const count = sel.slice ? (sel.permLimit !== null ? Math.min(sel.slice.count, sel.permLimit) : sel.slice.count) : sel.permLimit;
  // with a role's row limit and no slice, the limit pages forward
  const sliceKind = sel.slice?.kind ?? (count !== null ? 'first' : null);
  const items = sel.cursorItems.map((c) => c.item);

  /**
   * The rows of the connection before any cursor: FROM item, conditions and the order keys on
   * `alias`. A key through a relationship is computed once per row in a LATERAL subquery
   * (OFFSET 0 keeps PostgreSQL from inlining it), not again in every comparison.
   */
  const base = (alias: string): { from: Sql; conds: Sql[]; keys: Sql[] } => {
    let from: Sql;
    let conds: Sql[];
    if (!sel.args.distinctOn || sel.args.distinctOn.length === 0) {
      from = h.from(sel.source, alias, parent);
      conds = h.conditions(sel, alias, parent);
    } else {
      const inner = h.aliases.next('t');
      const order = join(
        items.map((o) => h.orderItem(o, inner)),
        ', ',
      );
      from = sql`(SELECT ${h.distinct(sel, inner)}* FROM ${h.from(sel.source, inner, parent)} WHERE ${andSql(h.conditions(sel, inner, parent))} ORDER BY ${order}) AS ${ident(alias)}`;
      conds = [];
    }
    const keys = items.map((o) => {
      if (o.target.kind === 'column') return guardedCol(alias, o.target.column, h.aliases);
      const l = h.aliases.next('o');
      from = sql`${from} LEFT JOIN LATERAL (SELECT ${h.orderTarget(o.target, alias)} AS "v" OFFSET 0) AS ${ident(l)} ON true`;
      return col(l, 'v');
    });
    return { from, conds, keys };
  };
  const values = sel.split ? sel.split.values.map((v) => (v ? valueSql(v) : null)) : [];
  const keysOf = (exprs: Sql[], before: boolean): Key[] =>
    sel.cursorItems.map((c, i) => ({
      expr: exprs[i]!,
      item: before ? flip(c.item) : c.item,
      value: values[i] ?? null,
      notNull:
        (c.item.target.kind === 'column' && !c.item.target.column.nullable) || (c.item.target.kind === 'aggregate' && c.item.target.agg.kind === 'count'),
    }));
  const orderSql = (exprs: Sql[], backwards: boolean) =>
    join(
      items.map((o, i) => {
        const x = backwards ? flip(o) : o;
        return sql`${exprs[i]!} ${raw(x.dir === 'asc' ? 'ASC' : 'DESC')} ${raw(x.nulls === 'first' ? 'NULLS FIRST' : 'NULLS LAST')}`;
      }),
      ', ',
    );

  // the page
  const t = h.aliases.next('t');
  const p = h.aliases.next('p');
  const { from, conds, keys: pageKeys } = base(t);
  const splitOn = (keys: Sql[]): Sql[] => (sel.split ? [keysetAfter(keysOf(keys, sel.split.kind === 'before'), false)] : []);
  conds.push(...splitOn(pageKeys));
  const readOrder = orderSql(pageKeys, last);
  // the page's output columns: each node field's values (the JSON objects are built in the
  // aggregate, not per row in a subquery), the cursor when asked for
  const columns: Sql[] = [];
  const column = (expr: Sql): Sql => {
    const name = `k${columns.length}`;
    columns.push(sql`${expr} AS ${ident(name)}`);
    return col(p, name);
  };
  const nodeJson = (fields: Field[]): Sql => h.objectExpr(fields.map((f) => [f.alias, column(h.fieldExpr(f, t))]));
  let cursor: Sql | undefined;
  const cursorColumn = (): Sql => (cursor ??= column(cursorText(sel.cursorItems, pageKeys)));
  const cursorBytes = cursorMaxBytes(sel.cursorItems);
  const nonEmpty = count === 0 ? raw('false') : raw('(count(*) > 0)');

  /**
   * More rows in reading order (hasNextPage of `first`, hasPreviousPage of `last`): the page
   * reads one row more than it shows, and that row's presence is the answer. (A second probe
   * through the index cost PostgreSQL about a tenth more per page.)
   */
  const wants = (kind: 'hasNextPage' | 'hasPreviousPage') => sel.fields.some((f) => f.kind === 'pageInfo' && f.fields.some((x) => x.kind === kind));
  const extra = count !== null && ((sliceKind === 'first' && wants('hasNextPage')) || (sliceKind === 'last' && wants('hasPreviousPage')));
  const more = (): Sql => (count === null ? raw('false') : sql`(count(*) > ${raw(String(count))})`);
  /** rows on the far side of the cursor exist (for a non-empty page) */
  const beyondCursor = (): Sql => {
    const t2 = h.aliases.next('t');
    const b = base(t2);
    // after `after`: rows at or before it; before `before`: rows at or after it
    const far = keysetAfter(keysOf(b.keys, sel.split!.kind === 'after'), true);
    return sql`(${nonEmpty} AND EXISTS (SELECT 1 FROM ${b.from} WHERE ${andSql([...b.conds, far])}))`;
  };
  const hasNext = () => orSql([...(sliceKind === 'first' ? [more()] : []), ...(sel.split?.kind === 'before' ? [beyondCursor()] : [])]);
  const hasPrev = () => orSql([...(sliceKind === 'last' ? [more()] : []), ...(sel.split?.kind === 'after' ? [beyondCursor()] : [])]);
  // `last` reads backwards: "_n" numbers the rows in reading order to put them back (and tells
  // the extra row, the last one read, from the page's)
  const backwards = last ? sql` ORDER BY ${col(p, '_n')} DESC` : raw('');
  const inPage = extra && last ? sql` FILTER (WHERE ${col(p, '_n')} <= ${raw(String(count))})` : raw('');
  const cursorAt = (end: boolean): Sql => {
    if (last) return sql`(array_agg(${cursorColumn()} ORDER BY ${col(p, '_n')}${raw(end ? '' : ' DESC')})${inPage})[1]`;
    if (!extra) return end ? sql`(array_agg(${cursorColumn()}))[count(*)]` : sql`(array_agg(${cursorColumn()}))[1]`;
    if (count === 0) return raw('NULL::text');
    return end ? sql`(array_agg(${cursorColumn()}))[least(count(*), ${raw(String(count))})]` : sql`(array_agg(${cursorColumn()}))[1]`;
  };
  /** the edges' JSON array from one JSON value or row per page row */
  const edgeArray = (item: Sql): Sql =>
    extra && !last
      ? sql`coalesce(array_to_json((array_agg(${item}))[1:${raw(String(count))}]), '[]')`
      : sql`coalesce(json_agg(${item}${backwards})${inPage}, '[]')`;

  const pageInfo = (fields: PageInfoField[]): Sql =>
    h.objectExpr(
      fields.map((f): [string, Sql] => {
        switch (f.kind) {
          case 'typename':
            return [f.alias, sql`${raw(quoteLiteral(f.name))}::text`];
          case 'startCursor':
            return [f.alias, base64Json(cursorAt(false), cursorBytes)];
          case 'endCursor':
            return [f.alias, base64Json(cursorAt(true), cursorBytes)];
          case 'hasNextPage':
            return [f.alias, hasNext()];
          case 'hasPreviousPage':
            return [f.alias, hasPrev()];
        }
      }),
    );
  // edges as records (json_agg of a row is cheaper than a json_build_object per edge): one
  // LATERAL row per page row, its node a nested row; json_build_object when an alias is too
  // long for a column name
  const laterals: Sql[] = [];
  const fitsColumns = (fields: EdgeField[]) =>
    fields.every((f) => Buffer.byteLength(f.alias) <= 63 && (f.kind !== 'node' || f.fields.every((x) => Buffer.byteLength(x.alias) <= 63)));
  const edges = (fields: EdgeField[]): Sql => {
    if (fitsColumns(fields)) {
      const nodes: Sql[] = [];
      const cols = fields.map((f): Sql => {
        switch (f.kind) {
          case 'typename':
            return sql`${raw(quoteLiteral(f.name))}::text AS ${ident(f.alias)}`;
          case 'cursor':
            return sql`${base64Json(cursorColumn(), cursorBytes)} AS ${ident(f.alias)}`;
          case 'node': {
            const n = h.aliases.next('n');
            nodes.push(
              sql`(SELECT ${join(
                f.fields.map((x) => sql`${column(h.fieldExpr(x, t))} AS ${ident(x.alias)}`),
                ', ',
              )}) AS ${ident(n)}`,
            );
            return sql`${ident(n)} AS ${ident(f.alias)}`;
          }
        }
      });
      const e = h.aliases.next('e');
      const from = nodes.length ? sql` FROM ${join(nodes, ', ')}` : raw('');
      laterals.push(sql` CROSS JOIN LATERAL (SELECT ${join(cols, ', ')}${from}) AS ${ident(e)}`);
      // json_agg/array_agg keep the page's order (as sql/select.ts relies on)
      return edgeArray(ident(e));
    }
    const edge = h.objectExpr(
      fields.map((f): [string, Sql] => {
        switch (f.kind) {
          case 'typename':
            return [f.alias, sql`${raw(quoteLiteral(f.name))}::text`];
          case 'cursor':
            return [f.alias, base64Json(cursorColumn(), cursorBytes)];
          case 'node':
            return [f.alias, nodeJson(f.fields)];
        }
      }),
    );
    return edgeArray(edge);
  };
  const pairs = sel.fields.map((f): [string, Sql] => {
    switch (f.kind) {
      case 'typename':
        return [f.alias, sql`${raw(quoteLiteral(f.name))}::text`];
      case 'pageInfo':
        return [f.alias, pageInfo(f.fields)];
      case 'edges':
        return [f.alias, edges(f.fields)];
    }
  });
  const output = h.objectExpr(pairs);
  const limit = count !== null ? raw(` LIMIT ${extra ? count + 1 : count}`) : raw('');
  const select = last ? [...columns, sql`row_number() OVER (ORDER BY ${readOrder}) AS "_n"`] : columns;
  const page = sql`SELECT ${join(select, ', ')} FROM ${from} WHERE ${andSql(conds)} ORDER BY ${readOrder}${limit}`;
  return sql`(SELECT ${output} FROM (${page}) AS ${ident(p)}${join(laterals, '')})`;
}
