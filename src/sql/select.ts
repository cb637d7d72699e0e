/**
 * Select IR → one SQL expression that builds the finished JSON inside
 * PostgreSQL. Shapes (see bench/README.md):
 *  - rows:    (SELECT coalesce(json_agg("_r"), '[]') FROM (SELECT <fields> FROM … ORDER BY … LIMIT …) AS "_r")
 *  - object:  (SELECT row_to_json("_r") FROM (SELECT <fields> FROM … WHERE <join> LIMIT 1) AS "_r")
 *  - aggregate: json_build_object over the aggregates of the selected rows, nodes via json_agg
 * Relationships are correlated subqueries; order_by through relationships too.
 */
import type {
  AggregateOpField,
  AggregateSelect,
  Correlation,
  Field,
  FunctionArg,
  OrderByItem,
  OrderByTarget,
  RootField,
  Select,
  SelectBase,
  SelectSource,
} from '../ir/types.js';
import { SESSION, constParam, ident, join, param, quoteLiteral, raw, sql, type Sql } from './ast.js';
import { Aliases, andSql, boolExpSql, col, guardedCall, guardedCol, tableSql, valueSql } from './boolexp.js';
import { jsonOutput, typeSql, type OutputOptions } from './pgtypes.js';
import type { PgType } from '../model/values.js';
import { connectionSql, nodeIdSql } from './connection.js';
import { actionLogSql } from './actions.js';
import type { ColumnModel } from '../model/tables.js';

export interface SelectCompileOptions extends OutputOptions {
  /** the FROM item of a `mutated` source (a set-returning expression of the table's row type) */
  mutatedRows?: Sql;
}

interface Parent {
  alias: string;
  corr: Correlation;
}

export class SelectCompiler {
  constructor(
    readonly opts: SelectCompileOptions,
    readonly aliases = new Aliases(),
  ) {}

  // ---- FROM / WHERE -------------------------------------------------------

  from(src: SelectSource, alias: string, parent?: Parent): Sql {
    if (src.kind === 'table') return sql`${tableSql(src.table)} AS ${ident(alias)}`;
    if (src.kind === 'mutated') {
      if (!this.opts.mutatedRows) throw new Error('no mutated rows to select from');
      return sql`${this.opts.mutatedRows} AS ${ident(alias)}`;
    }
    return sql`${ident(src.schema, src.name)}(${this.args(src.args, parent)}) AS ${ident(alias)}`;
  }

  args(args: FunctionArg[], parent?: Parent): Sql {
    const out: Sql[] = [];
    for (const a of args) {
      if (a.kind === 'default') break; // only trailing arguments may be omitted
      if (a.kind === 'value') out.push(valueSql(a.value));
      else if (a.kind === 'row') out.push(ident(parent!.alias));
      else out.push(sql`(${param(SESSION)})::${typeSql(a.type)}`);
    }
    return join(out, ', ');
  }

  conditions(sel: SelectBase, alias: string, parent?: Parent): Sql[] {
    const conds: Sql[] = [];
    if (parent && parent.corr.kind === 'relationship') {
      for (const [l, r] of parent.corr.rel.mapping) conds.push(sql`(${col(alias, r)}) = (${col(parent.alias, l)})`);
    }
    if (sel.filter && sel.filter.kind !== 'true') conds.push(boolExpSql(sel.filter, alias, this.aliases));
    if (sel.args.where && sel.args.where.kind !== 'true') conds.push(boolExpSql(sel.args.where, alias, this.aliases));
    return conds;
  }

  tail(sel: SelectBase, alias: string, single = false): Sql {
    const parts: Sql[] = [];
    if (sel.args.orderBy.length > 0) {
      parts.push(
        sql` ORDER BY ${join(
          sel.args.orderBy.map((o) => this.orderItem(o, alias)),
          ', ',
        )}`,
      );
    }
    const limit = single ? 1 : minLimit(sel.args.limit, sel.permLimit);
    if (limit !== null) parts.push(raw(` LIMIT ${limit}`));
    if (!single && sel.args.offset !== null && sel.args.offset !== 0) parts.push(raw(` OFFSET ${sel.args.offset}`));
    return join(parts, '');
  }

  distinct(sel: SelectBase, alias: string): Sql {
    const d = sel.args.distinctOn;
    if (!d || d.length === 0) return raw('');
    return sql`DISTINCT ON (${join(
      d.map((c) => guardedCol(alias, c, this.aliases)),
      ', ',
    )}) `;
  }

  orderItem(o: OrderByItem, alias: string): Sql {
    const dir = o.dir === 'asc' ? 'ASC' : 'DESC';
    const nulls = o.nulls === 'first' ? 'NULLS FIRST' : 'NULLS LAST';
    return sql`${this.orderTarget(o.target, alias)} ${raw(dir)} ${raw(nulls)}`;
  }

  orderTarget(t: OrderByTarget, alias: string): Sql {
    switch (t.kind) {
      case 'column':
        return guardedCol(alias, t.column, this.aliases);
      case 'object': {
        const r = this.aliases.next('o');
        const conds = t.rel.mapping.map(([l, rc]) => sql`(${col(r, rc)}) = (${col(alias, l)})`);
        if (t.filter && t.filter.kind !== 'true') conds.push(boolExpSql(t.filter, r, this.aliases));
        return sql`(SELECT ${this.orderTarget(t.next, r)} FROM ${tableSql(t.target)} AS ${ident(r)} WHERE ${andSql(conds)} LIMIT 1)`;
      }
      case 'aggregate': {
        const r = this.aliases.next('o');
        const conds = t.rel.mapping.map(([l, rc]) => sql`(${col(r, rc)}) = (${col(alias, l)})`);
        if (t.filter && t.filter.kind !== 'true') conds.push(boolExpSql(t.filter, r, this.aliases));
        const agg = t.agg.kind === 'count' ? raw('count(*)') : sql`${raw(t.agg.op)}(${guardedCol(r, t.agg.column, this.aliases)})`;
        return sql`(SELECT ${agg} FROM ${tableSql(t.target)} AS ${ident(r)} WHERE ${andSql(conds)})`;
      }
    }
  }

  // ---- fields ---------------------------------------------------------------

  fieldExpr(f: Field, alias: string): Sql {
    switch (f.kind) {
      case 'column': {
        const c = guardedCol(alias, f.column, this.aliases);
        if (f.jsonPath) return jsonPathExpr(c, f.jsonPath);
        return jsonOutput(c, { name: f.column.type, schema: f.column.typeSchema }, this.opts);
      }
      case 'typename':
        return sql`${raw(quoteLiteral(f.name))}::text`;
      case 'object':
        return this.object(f.select, { alias, corr: { kind: 'relationship', rel: f.rel } });
      case 'array':
        return this.rows(f.select, { alias, corr: { kind: 'relationship', rel: f.rel } });
      case 'array_aggregate':
        return this.aggregate(f.select, { alias, corr: { kind: 'relationship', rel: f.rel } });
      case 'computed_scalar': {
        const fn = f.field.function;
        const call = guardedCall(sql`${ident(fn.schema, fn.name)}(${this.args(f.args, { alias, corr: { kind: 'row' } })})`, f.field.guard, alias, this.aliases);
        if (f.jsonPath) return jsonPathExpr(call, f.jsonPath);
        return jsonOutput(call, f.type, this.opts);
      }
      case 'computed_table':
        return this.rows(f.select, { alias, corr: { kind: 'row' } });
      case 'node_id':
        return nodeIdSql(f.table, alias);
      case 'array_connection':
        return connectionSql<Parent>(this, f.select, { alias, corr: { kind: 'relationship', rel: f.rel } });
      case 'remote_join':
        // the join values; src/remote/join.ts replaces them with the remote's answer
        return sql`json_build_array(${join(
          f.columns.map((c) => col(alias, c.name)),
          ', ',
        )})`;
    }
  }

  /** `SELECT <fields as aliases>` list, or one json column named "root" when aliases don't fit. */
  fieldList(fields: Field[], alias: string): { list: Sql; asRoot: boolean } {
    if (fields.length > 0 && fields.every((f) => Buffer.byteLength(f.alias) <= 63)) {
      return {
        list: join(
          fields.map((f) => sql`${this.fieldExpr(f, alias)} AS ${ident(f.alias)}`),
          ', ',
        ),
        asRoot: false,
      };
    }
    return { list: sql`${this.objectExpr(fields.map((f) => [f.alias, this.fieldExpr(f, alias)]))} AS "root"`, asRoot: true };
  }

  /** A JSON object from (key, value) pairs, keys in order. */
  objectExpr(pairs: Array<[string, Sql]>): Sql {
    if (pairs.length <= 50) {
      return sql`json_build_object(${join(
        pairs.map(([k, v]) => sql`${raw(quoteLiteral(k))}, ${v}`),
        ', ',
      )})`;
    }
    // json_build_object takes at most 100 arguments
    const parts = pairs.map(([k, v], i) => sql`${raw(quoteLiteral(`${i ? ',' : ''}${JSON.stringify(k)}:`))} || coalesce(to_json(${v})::text, 'null')`);
    return sql`('{' || ${join(parts, ' || ')} || '}')::json`;
  }

  /** A JSON object per row of the select, for use inside the select list. */
  rowJson(fields: Field[], alias: string): Sql {
    if (fields.length > 0 && fields.every((f) => Buffer.byteLength(f.alias) <= 63)) {
      const r = this.aliases.next('e');
      return sql`(SELECT row_to_json(${ident(r)}) FROM (SELECT ${join(
        fields.map((f) => sql`${this.fieldExpr(f, alias)} AS ${ident(f.alias)}`),
        ', ',
      )}) AS ${ident(r)})`;
    }
    return this.objectExpr(fields.map((f) => [f.alias, this.fieldExpr(f, alias)]));
  }

  // ---- shapes ---------------------------------------------------------------

  rows(sel: Select, parent?: Parent): Sql {
    const t = this.aliases.next('t');
    const r = this.aliases.next('r');
    const { list, asRoot } = this.fieldList(sel.fields, t);
    const where = andSql(this.conditions(sel, t, parent));
    const inner = sql`SELECT ${this.distinct(sel, t)}${list} FROM ${this.from(sel.source, t, parent)} WHERE ${where}${this.tail(sel, t)}`;
    const item = asRoot ? sql`${ident(r)}."root"` : ident(r);
    return sql`(SELECT coalesce(json_agg(${item}), '[]') FROM (${inner}) AS ${ident(r)})`;
  }

  object(sel: Select, parent?: Parent): Sql {
    const t = this.aliases.next('t');
    const r = this.aliases.next('r');
    const { list, asRoot } = this.fieldList(sel.fields, t);
    const where = andSql(this.conditions(sel, t, parent));
    const inner = sql`SELECT ${list} FROM ${this.from(sel.source, t, parent)} WHERE ${where}${this.tail(sel, t, true)}`;
    const item = asRoot ? sql`${ident(r)}."root"` : sql`row_to_json(${ident(r)})`;
    return sql`(SELECT ${item} FROM (${inner}) AS ${ident(r)})`;
  }

  aggregate(sel: AggregateSelect, parent?: Parent): Sql {
    const t = this.aliases.next('t');
    const r = this.aliases.next('r');
    const projections: Sql[] = [];
    const projected = new Map<string, string>();
    const project = (column: ColumnModel): Sql => {
      let a = projected.get(column.name);
      if (!a) {
        a = `a${projected.size}`;
        projected.set(column.name, a);
        projections.push(sql`${guardedCol(t, column, this.aliases)} AS ${ident(a)}`);
      }
      return col(r, a);
    };
    let nodes = 0;
    // the role's row limit bounds the nodes, not the aggregates (Hasura)
    const nodeLimit = sel.permLimit !== null && (sel.args.limit === null || sel.permLimit < sel.args.limit) ? sel.permLimit : null;
    if (nodeLimit !== null && sel.fields.some((f) => f.kind === 'nodes')) {
      const order =
        sel.args.orderBy.length > 0
          ? sql`ORDER BY ${join(
              sel.args.orderBy.map((o) => this.orderItem(o, t)),
              ', ',
            )}`
          : raw('');
      projections.push(sql`row_number() OVER (${order}) AS "rn"`);
    }
    const pairs = sel.fields.map((f): [string, Sql] => {
      switch (f.kind) {
        case 'typename':
          return [f.alias, sql`${raw(quoteLiteral(f.name))}::text`];
        case 'aggregate':
          return [f.alias, this.objectExpr(f.fields.map((x) => [x.alias, this.aggregateOp(x, project)]))];
        case 'nodes': {
          const name = `n${nodes++}`;
          projections.push(sql`${this.rowJson(f.fields, t)} AS ${ident(name)}`);
          const filter = nodeLimit !== null ? sql` FILTER (WHERE ${col(r, 'rn')} <= ${raw(String(nodeLimit))})` : raw('');
          return [f.alias, sql`coalesce(json_agg(${col(r, name)})${filter}, '[]')`];
        }
      }
    });
    if (projections.length === 0) projections.push(raw('1 AS "one"'));
    const where = andSql(this.conditions(sel, t, parent));
    const inner = sql`SELECT ${this.distinct(sel, t)}${join(projections, ', ')} FROM ${this.from(sel.source, t, parent)} WHERE ${where}${this.tail({ ...sel, permLimit: null }, t)}`;
    return sql`(SELECT ${this.objectExpr(pairs)} FROM (${inner}) AS ${ident(r)})`;
  }

  aggregateOp(f: AggregateOpField, project: (c: ColumnModel) => Sql): Sql {
    switch (f.kind) {
      case 'typename':
        return sql`${raw(quoteLiteral(f.name))}::text`;
      case 'count': {
        if (!f.columns || f.columns.length === 0) return raw('count(*)');
        const cols = f.columns.map((c) => project(c));
        const arg = cols.length === 1 ? cols[0]! : sql`(${join(cols, ', ')})`;
        return f.distinct ? sql`count(DISTINCT ${arg})` : sql`count(${arg})`;
      }
      case 'op':
        return this.objectExpr(
          f.fields.map((x) => [
            x.alias,
            x.kind === 'typename' ? sql`${raw(quoteLiteral(x.name))}::text` : aggregateOutput(f.op, project(x.column), x.column, this.opts),
          ]),
        );
    }
  }

  root(f: RootField): Sql {
    switch (f.kind) {
      case 'select':
        return this.rows(f.select);
      case 'select_one':
        return this.object(f.select);
      case 'aggregate':
        return this.aggregate(f.select);
      case 'connection':
        return connectionSql<Parent>(this, f.select);
      case 'const':
        return sql`${constParam(f.json)}::json`;
      case 'action_log':
        return actionLogSql(this, f);
      case 'mutation':
        throw new Error('mutations are compiled by sql/mutation.ts');
      case 'action':
        throw new Error('actions are answered by their handlers (actions/execute.ts)');
      case 'remote':
        throw new Error('remote root fields are sent to their server (src/remote)');
    }
  }
}

function aggregateOutput(op: string, expr: Sql, column: { type: string; typeSchema: string }, opts: OutputOptions): Sql {
  const value = sql`${raw(op)}(${expr})`;
  if (op === 'max' || op === 'min') return jsonOutput(value, { name: column.type, schema: column.typeSchema } as PgType, opts);
  return value;
}

function minLimit(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}

function jsonPathExpr(expr: Sql, path: (string | number)[]): Sql {
  if (path.length === 0) return expr;
  return sql`(${expr} #> ${constParam(`{${path.map((p) => `"${String(p).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`)}::text[])`;
}

/** The JSON expression of one root field (a scalar subquery). */
export function rootFieldSql(f: RootField, opts: SelectCompileOptions): Sql {
  return new SelectCompiler(opts).root(f);
}

/** One statement returning every root field's JSON text as columns "0", "1", … */
export function rootStatementSql(fields: RootField[], opts: SelectCompileOptions): Sql {
  const c = new SelectCompiler(opts);
  return sql`SELECT ${join(
    fields.map((f, i) => sql`(${c.root(f)})::text AS ${ident(String(i))}`),
    ', ',
  )}`;
}

/**
 * A query's one root field as the whole response text, `SELECT '<before>' || <json> || '<after>'`
 * (`before`/`after`: the response's constant text around it, `{"data":{"<alias>":` and `}}`;
 * a null field is `null`), in column "0".
 */
export function rootResponseSql(field: RootField, before: string, after: string, opts: SelectCompileOptions): Sql {
  const c = new SelectCompiler(opts);
  return sql`SELECT ${raw(quoteLiteral(before))}::text || coalesce((${c.root(field)})::text, 'null') || ${raw(quoteLiteral(after))}::text AS "0"`;
}

/** A root field as a standalone statement (explain): `SELECT <json> AS "root"`. */
export function fieldStatementSql(f: RootField, opts: SelectCompileOptions): Sql {
  return sql`SELECT ${new SelectCompiler(opts).root(f)} AS "root"`;
}
