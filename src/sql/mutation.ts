/**
 * Mutation IR → SQL. Every root field writes with one statement:
 *
 *   insert: a chain of data-modifying CTEs, one INSERT per table, relationship
 *           and on_conflict clause — not per object: a parent with 100 children,
 *           or 10,000 parents with a child each, are two INSERTs.
 *             `"_i1" AS (INSERT INTO author … VALUES (…), (…) RETURNING "_t" AS "r", <check>)`
 *             `"_k2" AS (SELECT "r", row_number() OVER () AS "n" FROM "_i1")`
 *             `"_i3" AS (INSERT INTO article … SELECT "v"."c0", ("j"."r")."id"
 *                        FROM (VALUES (1, <parent position>, …), …) AS "v"(…) JOIN "_k2" AS "j" ON "j"."n" = "v"."l0"
 *                        WHERE <the parents were all written> ORDER BY "v"."o" …)`
 *           Rows an object relationship points to are inserted before the rows
 *           pointing to them, array-relationship rows after their parents; rows
 *           are matched to the rows they depend on by position (an INSERT writes
 *           and returns its rows in the order of its input). When an upsert
 *           skipped a row that others depend on, the statement fails with
 *           Hasura's "affects zero rows" error.
 *   update: `WITH "_m" AS (UPDATE … RETURNING "_t" AS "r", <check>)`
 *   delete: `WITH "_m" AS (DELETE … RETURNING "_t" AS "r")`
 *
 * The rows written are collected as an array of the table's row type and
 * read back with `unnest(…)`, so `returning` is an ordinary select over them.
 * When `returning` only reads columns, the same statement builds the response
 * (`result`); when it follows relationships or calls functions, those must see
 * what the statement wrote, so the statement returns `affected` and `rows`
 * and a second statement (`output`, parameters `$rows` and `$affected`)
 * builds the response — Hasura does the same.
 *
 * Permission checks are evaluated per written row in RETURNING and abort the
 * statement (`CASE WHEN <check> THEN NULL ELSE <raise> END`); a raise is a cast
 * of a marker text `svc-raise:<n>` that fails only when evaluated, and `n`
 * indexes `raises` (code and message for the caller). A check reading another
 * table sees the rows this statement inserted there before (see `inserted`).
 */
import type { ConflictTarget, Delete, Field, Insert, InsertRow, Mutation, MutationOutput, OnConflict, Select, Update, UpdateItem } from '../ir/types.js';
import type { BoolExp, RelationshipModel, TableModel } from '../model/tables.js';
import { NO_ARGS } from '../ir/types.js';
import { ident, join, param, quoteLiteral, raw, sql, type Param, type Sql } from './ast.js';
import { Aliases, andSql, boolExpSql, col, tableSql, valueSql } from './boolexp.js';
import type { OutputOptions } from './pgtypes.js';
import { SelectCompiler } from './select.js';
import type { ErrorCode } from '../errors.js';
import { jsonText } from '../json.js';

export interface RaisedError {
  code: ErrorCode;
  message: string;
}

export type CompiledMutation =
  /** nothing to write (no objects, nothing to set): the response is known */
  | { kind: 'constant'; json: string }
  | {
      kind: 'statements';
      /** returns "result" (the response JSON) when `output` is null, else "affected" and "rows" */
      write: Sql;
      output: Sql | null;
      raises: RaisedError[];
    };

/** Names of the parameters of the `output` statement. */
export const ROWS_PARAM = '$rows';
export const AFFECTED_PARAM = '$affected';

/** The marker a raise carries in its (cast) error message. */
export const RAISE_MARKER = 'svc-raise:';

const CHECK_FAILED = (kind: 'insert' | 'update'): RaisedError => ({
  code: 'permission-error',
  message: `Check constraint violation. ${kind} check constraint failed`,
});

const T = '_t';

/** One INSERT of the statement. */
interface Batch {
  cte: string;
  table: TableModel;
  /** rows it was given (fewer written: some were skipped on conflict) */
  size: number;
  /** the CTE numbering its rows, once something needs it */
  keys: string | null;
}

/** Where a row went: its INSERT and its position there (1-based). */
interface Placed {
  batch: Batch;
  n: number;
}

interface NodeRow {
  row: InsertRow;
  /** the parent row (array relationship) */
  parent?: Placed;
  /** the rows its object relationships point to, in the order of its batch's joins */
  objAt?: Placed[];
  /** filled when the row's INSERT is emitted */
  at?: Placed;
}

/** A structural key of IR (tables, columns and relationships by name), for grouping equal clauses. */
function irKey(x: unknown): string {
  return jsonText(x, (_k, v: unknown) => {
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if ('columnsByName' in o) return `table:${String(o.key)}`;
      if ('gqlName' in o && 'attnum' in o) return `column:${String(o.name)}`;
      if ('mapping' in o && 'remoteTable' in o) return `rel:${String(o.name)}`;
      if ('tableArgIndex' in o) return `computed:${String(o.name)}`;
    }
    return v;
  });
}

/** `"schema"."table"` as Hasura quotes tables in messages (public tables unqualified). */
function tableText(t: TableModel): string {
  return JSON.stringify(t.name.schema === 'public' ? t.name.name : `${t.name.schema}.${t.name.name}`);
}

/** Does the output read anything besides the written rows' columns? */
export function outputReadsOtherRows(out: MutationOutput): boolean {
  const nested = (fs: Field[]) => fs.some((f) => f.kind !== 'column' && f.kind !== 'typename');
  if (out.kind === 'single') return nested(out.fields);
  return out.fields.some((f) => f.kind === 'returning' && nested(f.fields));
}

class Writer {
  readonly aliases = new Aliases();
  readonly ctes: Sql[] = [];
  /** every CTE that writes rows (affected_rows counts them all) */
  readonly written: string[] = [];
  readonly raises: RaisedError[] = [];
  /** CTEs that inserted into each table so far (for conditions that must see those rows) */
  private readonly insertedInto = new Map<string, { table: TableModel; ctes: string[] }>();

  /** A fresh name, unique in the statement (CTEs and table aliases share one counter). */
  name(prefix: string): string {
    return this.aliases.next(prefix);
  }

  /** An expression that fails with `e` when evaluated (an int4; cast it as needed). */
  raise(e: RaisedError): Sql {
    let i = this.raises.findIndex((x) => x.code === e.code && x.message === e.message);
    if (i < 0) {
      this.raises.push(e);
      i = this.raises.length - 1;
    }
    // the concatenation with a subquery keeps the planner from folding (and failing on) the cast
    return sql`(${raw(quoteLiteral(`${RAISE_MARKER}${i}`))} || (SELECT ''))::int4`;
  }

  /** `CASE WHEN <cond> THEN NULL ELSE <raise> END` over the row `"_t"`. */
  check(cond: BoolExp, e: RaisedError): Sql {
    return sql`CASE WHEN ${boolExpSql(cond, T, this.aliases)} THEN NULL ELSE ${this.raise(e)} END`;
  }

  addCte(name: string, body: Sql): void {
    this.ctes.push(sql`${ident(name)} AS (${body})`);
    this.written.push(name);
  }

  /** Conditions compiled from now on see the rows `cte` inserted into `t`. */
  inserted(t: TableModel, cte: string): void {
    let e = this.insertedInto.get(t.key);
    if (!e) this.insertedInto.set(t.key, (e = { table: t, ctes: [] }));
    e.ctes.push(cte);
    const parts = [sql`SELECT * FROM ${tableSql(t)}`, ...e.ctes.map((c) => sql`SELECT (${ident('r')}).* FROM ${ident(c)}`)];
    this.aliases.setSource(t, sql`(${join(parts, ' UNION ALL ')})`);
  }

  affected(): Sql {
    if (this.written.length === 0) return raw('0');
    return join(
      this.written.map((c) => sql`(SELECT count(*) FROM ${ident(c)})`),
      ' + ',
    );
  }

  // ---- insert ---------------------------------------------------------------------

  /** Inserts an insert's rows (and everything related); returns its rows' places, in input order. */
  insertRoot(ins: Insert): Placed[] {
    const rows: NodeRow[] = ins.rows.map((row) => ({ row }));
    this.insertRows(ins, rows, null);
    return rows.map((r) => r.at!);
  }

  /**
   * Inserts rows of one table that share presets, checks and on_conflict:
   * first the rows their object relationships point to, then the rows
   * themselves in as few INSERTs as their shapes allow, then the rows of
   * their array relationships (grouped across all parents).
   */
  private insertRows(ins: Insert, rows: NodeRow[], link: { rel: RelationshipModel; parent: TableModel } | null): void {
    // 1. object relationships: one insert per relationship and on_conflict, for all rows
    const objGroups = new Map<string, { rel: RelationshipModel; template: Insert; children: NodeRow[]; owners: NodeRow[] }>();
    for (const r of rows) {
      for (const or of r.row.objectRels) {
        const key = `${or.rel.name}\u0000${irKey(or.insert.onConflict)}`;
        let g = objGroups.get(key);
        if (!g) objGroups.set(key, (g = { rel: or.rel, template: or.insert, children: [], owners: [] }));
        g.children.push({ row: or.insert.rows[0]! });
        g.owners.push(r);
      }
    }
    const objAt = new Map<NodeRow, Array<{ rel: RelationshipModel; at: Placed }>>();
    for (const g of objGroups.values()) {
      this.insertRows(g.template, g.children, null);
      g.owners.forEach((o, i) => objAt.set(o, [...(objAt.get(o) ?? []), { rel: g.rel, at: g.children[i]!.at! }]));
    }

    // 2. the rows: independent ones in one plain INSERT … VALUES; the others by shape
    const plain: NodeRow[] = [];
    const shaped = new Map<string, NodeRow[]>();
    for (const r of rows) {
      const objs = objAt.get(r) ?? [];
      r.objAt = objs.map((o) => o.at);
      if (!r.parent && objs.length === 0) {
        plain.push(r);
        continue;
      }
      const key = JSON.stringify([
        r.row.values.map((v) => v.column.name),
        r.parent ? r.parent.batch.cte : null,
        objs.map((o) => `${o.rel.name}:${o.at.batch.cte}`),
      ]);
      shaped.set(key, [...(shaped.get(key) ?? []), r]);
    }
    if (plain.length > 0) this.plainBatch(ins, plain);
    for (const group of shaped.values()) this.dependentBatch(ins, group, objAt.get(group[0]!) ?? [], link);

    // 3. array relationships: one insert per relationship, on_conflict and parent batch
    const arrGroups = new Map<string, { rel: RelationshipModel; template: Insert; children: NodeRow[] }>();
    for (const r of rows) {
      for (const ar of r.row.arrayRels) {
        const key = `${ar.rel.name}\u0000${irKey(ar.insert.onConflict)}\u0000${r.at!.batch.cte}`;
        let g = arrGroups.get(key);
        if (!g) arrGroups.set(key, (g = { rel: ar.rel, template: ar.insert, children: [] }));
        for (const row of ar.insert.rows) g.children.push({ row, parent: r.at! });
      }
    }
    for (const g of arrGroups.values()) this.insertRows(g.template, g.children, { rel: g.rel, parent: ins.table });
  }

  /** `INSERT … VALUES (…), (…)`: rows needing nothing from other inserts (absent columns take their DEFAULT). */
  private plainBatch(ins: Insert, rows: NodeRow[]): void {
    const t = ins.table;
    const values = rows.map((r) => {
      // presets are the defaults; what the row says wins (as in Hasura)
      const m = new Map<string, Sql>();
      for (const p of ins.presets) m.set(p.column.name, valueSql(p.value));
      for (const v of r.row.values) m.set(v.column.name, valueSql(v.value));
      return m;
    });
    let columns = t.columns.filter((c) => values.some((m) => m.has(c.name)));
    if (columns.length === 0) columns = t.columns.slice(0, 1);
    const tuples = values.map(
      (m) =>
        sql`(${join(
          columns.map((c) => m.get(c.name) ?? raw('DEFAULT')),
          ', ',
        )})`,
    );
    this.emitInsert(
      ins,
      rows,
      sql`(${join(
        columns.map((c) => ident(c.name)),
        ', ',
      )}) VALUES ${join(tuples, ', ')}`,
    );
  }

  /**
   * `INSERT … SELECT … FROM (VALUES …) JOIN <keys of the related inserts>`: rows taking columns
   * from rows inserted before (their parent, their object relationships), matched by position.
   * All rows have the same columns.
   */
  private dependentBatch(
    ins: Insert,
    rows: NodeRow[],
    objs: Array<{ rel: RelationshipModel; at: Placed }>,
    link: { rel: RelationshipModel; parent: TableModel } | null,
  ): void {
    const t = ins.table;
    const v = this.name('v');
    const given = rows[0]!.row.values.map((x) => x.column);
    const exprs = new Map<string, Sql>();
    for (const p of ins.presets) exprs.set(p.column.name, valueSql(p.value));
    given.forEach((c, i) => exprs.set(c.name, col(v, `c${i}`)));
    const joins: Sql[] = [];
    const guards: Sql[] = [];
    const linkCols: Array<(r: NodeRow) => number> = [];
    const depend = (batch: Batch, mapping: Array<[string, string]>, e: RaisedError, ordinal: (r: NodeRow) => number) => {
      const j = this.name('j');
      const l = `l${linkCols.length}`;
      linkCols.push(ordinal);
      joins.push(sql` JOIN ${ident(this.keys(batch))} AS ${ident(j)} ON ${col(j, 'n')} = ${col(v, l)}`);
      guards.push(sql`CASE WHEN (SELECT count(*) FROM ${ident(batch.cte)}) = ${raw(String(batch.size))} THEN true ELSE ((${this.raise(e)})::text)::bool END`);
      for (const [target, source] of mapping) exprs.set(target, sql`(${col(j, 'r')}).${ident(source)}`);
    };
    objs.forEach((o, k) => {
      const e: RaisedError = {
        code: 'not-supported',
        message: `cannot proceed to insert object relation ${JSON.stringify(o.rel.name)} since insert to table ${tableText(o.at.batch.table)} affects zero rows`,
      };
      depend(
        o.at.batch,
        o.rel.mapping.map(([l, r]) => [l, r]),
        e,
        (r) => objAtOf(r, k),
      );
    });
    if (link) {
      const e: RaisedError = {
        code: 'not-supported',
        message: `cannot proceed to insert array relations since insert to table ${tableText(link.parent)} affects zero rows`,
      };
      depend(
        rows[0]!.parent!.batch,
        link.rel.mapping.map(([l, r]) => [r, l]),
        e,
        (r) => r.parent!.n,
      );
    }
    const columns = t.columns.filter((c) => exprs.has(c.name));
    const names = ['o', ...linkCols.map((_, i) => `l${i}`), ...given.map((_, i) => `c${i}`)];
    const tuples = rows.map((r, i) => {
      const items = [raw(String(i + 1)), ...linkCols.map((f) => raw(String(f(r)))), ...r.row.values.map((x) => valueSql(x.value))];
      return sql`(${join(items, ', ')})`;
    });
    const select = sql`SELECT ${join(
      columns.map((c) => exprs.get(c.name)!),
      ', ',
    )} FROM (VALUES ${join(tuples, ', ')}) AS ${ident(v)}(${join(
      names.map((n) => ident(n)),
      ', ',
    )})${join(joins, '')} WHERE ${andSql(guards)} ORDER BY ${col(v, 'o')}`;
    this.emitInsert(
      ins,
      rows,
      sql`(${join(
        columns.map((c) => ident(c.name)),
        ', ',
      )}) ${select}`,
    );

    // which related row (of the k-th object relationship) each row takes
    function objAtOf(r: NodeRow, k: number): number {
      return r.objAt![k]!.n;
    }
  }

  private emitInsert(ins: Insert, rows: NodeRow[], body: Sql): void {
    const returning = [sql`${ident(T)} AS ${ident('r')}`];
    const check = this.insertCheck(ins);
    if (check) returning.push(sql`${check} AS ${ident('c')}`);
    const name = this.name('i');
    this.addCte(name, sql`INSERT INTO ${tableSql(ins.table)} AS ${ident(T)} ${body}${this.onConflict(ins.onConflict)} RETURNING ${join(returning, ', ')}`);
    this.inserted(ins.table, name);
    const batch: Batch = { cte: name, table: ins.table, size: rows.length, keys: null };
    rows.forEach((r, i) => (r.at = { batch, n: i + 1 }));
  }

  /** `(r, n)`: the rows a batch inserted, numbered in the order they were written (that of its VALUES). */
  keys(batch: Batch): string {
    if (!batch.keys) {
      batch.keys = this.name('k');
      this.ctes.push(sql`${ident(batch.keys)} AS (SELECT ${ident('r')}, row_number() OVER () AS ${ident('n')} FROM ${ident(batch.cte)})`);
    }
    return batch.keys;
  }

  private insertCheck(ins: Insert): Sql | null {
    const upsert = ins.onConflict?.action === 'update';
    if (upsert && ins.updateCheck) {
      const onInsert = ins.check ? this.check(ins.check, CHECK_FAILED('insert')) : raw('NULL');
      const onUpdate = this.check(ins.updateCheck, CHECK_FAILED('update'));
      // xmax is 0 for a freshly inserted row version (Hasura's test)
      return sql`CASE WHEN ${col(T, 'xmax')} = 0 THEN ${onInsert} ELSE ${onUpdate} END`;
    }
    return ins.check && ins.check.kind !== 'true' ? this.check(ins.check, CHECK_FAILED('insert')) : null;
  }

  private onConflict(oc: OnConflict | null): Sql {
    if (!oc) return raw('');
    const target = oc.target ? conflictTarget(oc.target) : raw('');
    if (oc.action === 'ignore' || (oc.columns.length === 0 && oc.presets.length === 0)) return sql` ON CONFLICT${target} DO NOTHING`;
    const sets = [
      ...oc.columns.map((c) => sql`${ident(c.name)} = EXCLUDED.${ident(c.name)}`),
      ...oc.presets.map((p) => sql`${ident(p.column.name)} = ${valueSql(p.value)}`),
    ];
    const where = oc.where && oc.where.kind !== 'true' ? sql` WHERE ${boolExpSql(oc.where, T, this.aliases)}` : raw('');
    return sql` ON CONFLICT${target} DO UPDATE SET ${join(sets, ', ')}${where}`;
  }

  /** The rows at `places` as one array of the table's row type, in that order. */
  rowsArray(places: Placed[]): Sql {
    const batches = [...new Set(places.map((p) => p.batch))];
    if (batches.length === 1) return sql`(SELECT array_agg(${ident('r')}) FROM ${ident(batches[0]!.cte)})`;
    // several INSERTs: put the rows back in input order (their positions in each INSERT are known)
    const x = this.name('x');
    const parts = batches.map((b) => {
      const order = places.map((p, i) => (p.batch === b ? i + 1 : 0)).filter((i) => i > 0);
      const k = this.name('k');
      return sql`SELECT ${col(k, 'r')}, (ARRAY[${raw(order.join(','))}])[${col(k, 'n')}] AS ${ident('g')} FROM ${ident(this.keys(b))} AS ${ident(k)}`;
    });
    return sql`(SELECT array_agg(${col(x, 'r')} ORDER BY ${col(x, 'g')}) FROM (${join(parts, ' UNION ALL ')}) AS ${ident(x)})`;
  }

  // ---- update / delete ---------------------------------------------------------------

  update(u: Update): string {
    const sets = u.items.map((i) => sql`${ident(i.column.name)} = ${updateExpr(i)}`);
    const returning = [sql`${ident(T)} AS ${ident('r')}`];
    if (u.check && u.check.kind !== 'true') returning.push(sql`${this.check(u.check, CHECK_FAILED('update'))} AS ${ident('c')}`);
    const body = sql`UPDATE ${tableSql(u.table)} AS ${ident(T)} SET ${join(sets, ', ')} WHERE ${boolExpSql(u.where, T, this.aliases)} RETURNING ${join(returning, ', ')}`;
    const name = this.name('m');
    this.addCte(name, body);
    return name;
  }

  delete(d: Delete): string {
    const body = sql`DELETE FROM ${tableSql(d.table)} AS ${ident(T)} WHERE ${boolExpSql(d.where, T, this.aliases)} RETURNING ${ident(T)} AS ${ident('r')}`;
    const name = this.name('m');
    this.addCte(name, body);
    return name;
  }
}

function conflictTarget(t: ConflictTarget): Sql {
  if (t.kind === 'constraint') return sql` ON CONSTRAINT ${ident(t.name)}`;
  return sql` (${join(
    t.columns.map((c) => ident(c.name)),
    ', ',
  )})`;
}

function updateExpr(i: UpdateItem): Sql {
  const cur = col(T, i.column.name);
  const v = i.value;
  switch (i.op) {
    case 'default':
      return raw('DEFAULT');
    case 'set':
      return valueSql(v!);
    case 'inc':
      return sql`${cur} + ${valueSql(v!)}`;
    case 'mul':
      return sql`${cur} * ${valueSql(v!)}`;
    case 'append':
      return sql`${cur} || ${valueSql(v!)}`;
    case 'prepend':
      return sql`${valueSql(v!)} || ${cur}`;
    case 'delete_key':
      return sql`${cur} - ${valueSql(v!)}`;
    case 'delete_elem':
      return sql`${cur} - ${valueSql(v!)}`;
    case 'delete_at_path':
      return sql`${cur} #- ${valueSql(v!)}`;
  }
}

function tableOf(m: Mutation): TableModel {
  return m.kind === 'insert' ? m.insert.table : m.kind === 'update' ? m.update.table : m.delete.table;
}

/** The response of a mutation that writes nothing. */
export function emptyResponse(out: MutationOutput): string {
  if (out.kind === 'single') return 'null';
  const parts = out.fields.map((f) => {
    const v = f.kind === 'affected_rows' ? '0' : f.kind === 'returning' ? '[]' : JSON.stringify(f.name);
    return `${JSON.stringify(f.alias)}:${v}`;
  });
  return `{${parts.join(',')}}`;
}

/** The response JSON over the written rows (`rows`: a FROM item of the table's row type; `affected`: an integer). */
function responseSql(c: SelectCompiler, out: MutationOutput, table: TableModel, affected: Sql): Sql {
  const select = (fields: Field[]): Select => ({ source: { kind: 'mutated', table }, filter: null, permLimit: null, args: NO_ARGS, fields });
  if (out.kind === 'single') return c.object(select(out.fields));
  return c.objectExpr(
    out.fields.map((f): [string, Sql] => {
      switch (f.kind) {
        case 'affected_rows':
          return [f.alias, affected];
        case 'typename':
          return [f.alias, sql`${raw(quoteLiteral(f.name))}::text`];
        case 'returning':
          return [f.alias, c.rows(select(f.fields))];
      }
    }),
  );
}

function textParam(name: string): Param {
  return { kind: 'var', name, path: [], encode: (v) => (v === null || v === undefined ? null : String(v)) };
}

/** Compiles one mutation root field. */
export function compileMutation(m: Mutation, out: MutationOutput, opts: OutputOptions): CompiledMutation {
  if (m.kind === 'insert' && m.insert.rows.length === 0) return { kind: 'constant', json: emptyResponse(out) };
  if (m.kind === 'update' && m.update.items.length === 0) return { kind: 'constant', json: emptyResponse(out) };
  const table = tableOf(m);
  const w = new Writer();
  let rowsArray: Sql;
  if (m.kind === 'insert') rowsArray = w.rowsArray(w.insertRoot(m.insert));
  else rowsArray = sql`(SELECT array_agg(${ident('r')}) FROM ${ident(m.kind === 'update' ? w.update(m.update) : w.delete(m.delete))})`;
  const withClause = sql`WITH ${join(w.ctes, ', ')}`;
  const rowArrayType = sql`${ident(table.name.schema, table.name.name)}[]`;

  if (!outputReadsOtherRows(out)) {
    const rowsCte = w.name('rows');
    const c = new SelectCompiler({ ...opts, mutatedRows: sql`unnest((SELECT ${ident('a')} FROM ${ident(rowsCte)}))` }, w.aliases);
    const write = sql`${withClause}, ${ident(rowsCte)} AS (SELECT (${rowsArray})::${rowArrayType} AS ${ident('a')}) SELECT (${responseSql(c, out, table, sql`(${w.affected()})`)})::text AS ${ident('result')}`;
    return { kind: 'statements', write, output: null, raises: w.raises };
  }
  const write = sql`${withClause} SELECT (${w.affected()})::text AS ${ident('affected')}, (${rowsArray})::text AS ${ident('rows')}`;
  const c = new SelectCompiler({ ...opts, mutatedRows: sql`unnest((${param(textParam(ROWS_PARAM))})::${rowArrayType})` });
  const output = sql`SELECT (${responseSql(c, out, table, sql`(${param(textParam(AFFECTED_PARAM))})::int`)})::text AS ${ident('result')}`;
  return { kind: 'statements', write, output, raises: w.raises };
}

/** The error a raise stands for, from a database error message; undefined when it is none of ours. */
export function raisedError(message: string, raises: RaisedError[]): RaisedError | undefined {
  const i = message.indexOf(RAISE_MARKER);
  if (i < 0) return undefined;
  const n = Number.parseInt(message.slice(i + RAISE_MARKER.length), 10);
  return raises[n];
}
