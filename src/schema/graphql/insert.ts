/**
 * Input types of inserts and their parsers (Hasura v1.3 names):
 * `<table>_insert_input` (insertable columns and relationships to tables the
 * role may insert into), `<table>_obj_rel_insert_input`,
 * `<table>_arr_rel_insert_input`, `<table>_on_conflict` with the enums
 * `<table>_constraint` and `<table>_update_column`.
 */
import { GraphQLEnumType, GraphQLInputObjectType, GraphQLList, GraphQLNonNull, type GraphQLInputFieldConfig } from 'graphql';
import type { DocumentContext } from '../../ir/document.js';
import { type InVal } from '../../ir/input.js';
import { validationError } from '../../ir/messages.js';
import type { Insert, InsertRow, OnConflict } from '../../ir/types.js';
import { andExp } from '../../ir/types.js';
import { columnType } from '../../permissions/filter.js';
import type { ColumnModel, RelationshipModel, TableModel } from '../../model/tables.js';
import { listItems, refOf, svcExt, type BoolExpParser, type RoleSchemaBuilder } from './builder.js';
import { isGraphQLName, quotedTable, sortedEntries } from './names.js';

/** Parses one object of `<table>_insert_input`; `determined`: columns a parent insert sets. */
export type InsertObjectParser = (ctx: DocumentContext, v: InVal, path: string, determined: ReadonlySet<string>) => InsertRow;
export type OnConflictParser = (ctx: DocumentContext, v: InVal, path: string) => OnConflict | null;
type RelInsertParser = (ctx: DocumentContext, v: InVal, path: string, determined: ReadonlySet<string>) => Insert;

const showColumns = (cols: string[]) => cols.map((c) => JSON.stringify(c)).join(', ');

function relTarget(b: RoleSchemaBuilder, rel: RelationshipModel): TableModel | null {
  const t = b.cache.tables.get(`${rel.remoteTable.schema}.${rel.remoteTable.name}`);
  // (a view that cannot take rows is left out, rather than failing at run time)
  if (!t || !t.info.insertable || !isGraphQLName(b.tableName(t)) || !isGraphQLName(rel.name)) return null;
  return b.access.insert(t) ? t : null;
}

/** `<table>_insert_input`, or undefined when the role may not insert into the table. */
export function insertInput(b: RoleSchemaBuilder, t: TableModel): GraphQLInputObjectType | undefined {
  const acc = b.access.insert(t);
  if (!acc) return undefined;
  const tname = b.tableName(t);
  const name = `${tname}_insert_input`;
  return b.register(name, () => {
    const cols = b.gqlColumns(t, acc.columns);
    const byGql = new Map(cols.map((c) => [c.column.gqlName, c.column]));
    const rels = new Map<string, { rel: RelationshipModel; target: TableModel }>();
    for (const rel of t.relationships.values()) {
      const target = relTarget(b, rel);
      if (target) rels.set(rel.name, { rel, target });
    }
    const parse: InsertObjectParser = (ctx, v, path, determined) => parseInsertObject(b, t, byGql, rels, ctx, v, path, determined);
    return new GraphQLInputObjectType({
      name,
      description: `input type for inserting data into table ${quotedTable(t.name)}`,
      fields: () => {
        const f: Record<string, GraphQLInputFieldConfig> = {};
        for (const c of cols) f[c.column.gqlName] = { type: c.gql.type, description: c.column.description ?? undefined };
        for (const { rel, target } of rels.values()) {
          if (byGql.has(rel.name)) continue;
          f[rel.name] = { type: rel.kind === 'object' ? objRelInput(b, target)! : arrRelInput(b, target)! };
        }
        return sortedEntries(f);
      },
      extensions: { svc: parse },
    });
  });
}

function parseInsertObject(
  b: RoleSchemaBuilder,
  t: TableModel,
  columns: Map<string, ColumnModel>,
  rels: Map<string, { rel: RelationshipModel; target: TableModel }>,
  ctx: DocumentContext,
  v: InVal,
  path: string,
  determined: ReadonlySet<string>,
): InsertRow {
  const row: InsertRow = { values: [], objectRels: [], arrayRels: [] };
  if (v.kind !== 'object') throw validationError(`expecting an object for type ${JSON.stringify(`${b.tableName(t)}_insert_input`)}`, path);
  const given: string[] = [];
  for (const [k, x] of v.fields) {
    const col = columns.get(k);
    if (col) {
      given.push(col.name);
      row.values.push({ column: col, value: { ref: refOf(x), type: columnType(col), numberText: 'scientific' } });
    }
  }
  const conflicting = given.filter((c) => determined.has(c));
  if (conflicting.length > 0) {
    throw validationError(`cannot insert ${showColumns(conflicting)} columns as their values are already being determined by parent insert`, path);
  }
  for (const [k, x] of v.fields) {
    const r = rels.get(k);
    if (!r || columns.has(k) || x.kind === 'null') continue;
    const p = `${path}.${k}`;
    const parser = svcExt<RelInsertParser>(x.kind === 'object' ? x.type : undefined);
    if (r.rel.kind === 'object') {
      const local = r.rel.mapping.map(([l]) => l);
      const clash = local.filter((c) => given.includes(c) || determined.has(c));
      if (clash.length > 0) {
        // upstream v1.3's words, its spelling "relation ship" included (clients compare the text)
        throw validationError(
          `cannot insert object relation ship ${JSON.stringify(r.rel.name)} as ${showColumns(clash)} column values are already determined`,
          p,
        );
      }
      row.objectRels.push({ rel: r.rel, insert: parser(ctx, x, p, new Set()) });
    } else {
      const ins = parser(ctx, x, p, new Set(r.rel.mapping.map(([, rc]) => rc)));
      if (ins.rows.length > 0) row.arrayRels.push({ rel: r.rel, insert: ins });
    }
  }
  return row;
}

export interface InsertArgs {
  objects: InVal[];
  /** path of the objects: of the list, or of the one object when `single` */
  path: string;
  single: boolean;
  onConflict: InVal | undefined;
  conflictPath: string;
  /** columns a parent insert sets */
  determined: ReadonlySet<string>;
}

/** The role's insert of objects into `t`. */
export function insertOf(b: RoleSchemaBuilder, t: TableModel, ctx: DocumentContext, a: InsertArgs): Insert {
  const acc = b.access.insert(t)!;
  const parse = svcExt<InsertObjectParser>(insertInput(b, t)!);
  const rows = a.objects.map((o, i) => parse(ctx, o, a.single ? a.path : `${a.path}[${i}]`, a.determined));
  const oc = a.onConflict && a.onConflict.kind === 'object' ? svcExt<OnConflictParser>(a.onConflict.type)(ctx, a.onConflict, a.conflictPath) : null;
  return { table: t, rows, presets: acc.presets, onConflict: oc, check: acc.check, updateCheck: b.access.update(t)?.check ?? null };
}

function relInput(b: RoleSchemaBuilder, t: TableModel, kind: 'obj' | 'arr'): GraphQLInputObjectType | undefined {
  const input = insertInput(b, t);
  if (!input) return undefined;
  const tname = b.tableName(t);
  const name = `${tname}_${kind}_rel_insert_input`;
  return b.register(name, () => {
    const conflict = onConflictInput(b, t);
    const parse: RelInsertParser = (ctx, v, path, determined) => {
      const f = new Map(v.kind === 'object' ? v.fields : []);
      const data = f.get('data');
      const items = kind === 'obj' ? (data ? [data] : []) : listItems(data ?? { kind: 'null' });
      return insertOf(b, t, ctx, {
        objects: items,
        path: `${path}.data`,
        single: kind === 'obj',
        onConflict: f.get('on_conflict'),
        conflictPath: `${path}.on_conflict`,
        determined,
      });
    };
    const fields: Record<string, GraphQLInputFieldConfig> = {
      data: { type: kind === 'obj' ? new GraphQLNonNull(input) : new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(input))) },
    };
    if (conflict) fields.on_conflict = { type: conflict };
    return new GraphQLInputObjectType({
      name,
      description: `input type for inserting ${kind === 'obj' ? 'object' : 'array'} relation for remote table ${quotedTable(t.name)}`,
      fields,
      extensions: { svc: parse },
    });
  });
}

export const objRelInput = (b: RoleSchemaBuilder, t: TableModel) => relInput(b, t, 'obj');
export const arrRelInput = (b: RoleSchemaBuilder, t: TableModel) => relInput(b, t, 'arr');

/** Unique and primary key constraints whose names GraphQL can express. */
function constraints(t: TableModel): string[] {
  const names = [...(t.info.primaryKey ? [t.info.primaryKey.name] : []), ...t.info.uniqueConstraints.map((u) => u.name)];
  return names.filter(isGraphQLName);
}

/** `<table>_update_column`: the columns the role may update (upserts). */
export function updateColumnEnum(b: RoleSchemaBuilder, t: TableModel): GraphQLEnumType | undefined {
  const acc = b.access.update(t);
  if (!acc) return undefined;
  const cols = b.gqlColumns(t, acc.columns);
  if (cols.length === 0) return undefined;
  const name = `${b.tableName(t)}_update_column`;
  return b.register(name, () => {
    const values: Record<string, { description: string; value: string }> = {};
    for (const c of cols) values[c.column.gqlName] = { description: 'column name', value: c.column.name };
    return new GraphQLEnumType({ name, description: `update columns of table ${quotedTable(t.name)}`, values: sortedEntries(values) });
  });
}

/** `<table>_on_conflict`: only when the role may update the table and it has unique constraints (upserts need both). */
export function onConflictInput(b: RoleSchemaBuilder, t: TableModel): GraphQLInputObjectType | undefined {
  const columns = updateColumnEnum(b, t);
  const names = constraints(t);
  if (!columns || names.length === 0) return undefined;
  const tname = b.tableName(t);
  const name = `${tname}_on_conflict`;
  return b.register(name, () => {
    const constraint = b.register(`${tname}_constraint`, () => {
      const values: Record<string, { description: string; value: string }> = {};
      for (const n of names) values[n] = { description: 'unique or primary key constraint', value: n };
      return new GraphQLEnumType({
        name: `${tname}_constraint`,
        description: `unique or primary key constraints on table ${quotedTable(t.name)}`,
        values: sortedEntries(values),
      });
    });
    const where = b.boolExp(b.viewOrEmpty(t));
    const upd = b.access.update(t)!;
    const parse: OnConflictParser = (ctx, v, path) => {
      if (v.kind !== 'object') return null;
      const f = new Map(v.fields);
      const cname = enumValue(ctx, f.get('constraint'));
      const target = { kind: 'constraint' as const, name: cname! };
      const cols = listItems(f.get('update_columns') ?? { kind: 'null' }).map((x) => t.columnsByName.get(enumValue(ctx, x)!)!);
      if (cols.length === 0) return { action: 'ignore', target };
      const w = f.get('where');
      const userWhere = w && w.kind === 'object' ? svcExt<BoolExpParser>(w.type)(ctx, w, `${path}.where`) : null;
      return { action: 'update', target, columns: cols, presets: upd.presets, where: andExp(userWhere, upd.filter) };
    };
    return new GraphQLInputObjectType({
      name,
      description: `on conflict condition type for table ${quotedTable(t.name)}`,
      fields: {
        constraint: { type: new GraphQLNonNull(constraint) },
        update_columns: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(columns))) },
        where: { type: where },
      },
      extensions: { svc: parse },
    });
  });
}

/** The internal value of an enum input (column name for `<table>_update_column`). */
export function enumValue(ctx: DocumentContext, v: InVal | undefined): string | undefined {
  if (!v || v.kind === 'null') return undefined;
  const name = ctx.valueOf(v) as string;
  if (v.kind === 'enum') return (v.type.getValue(name)?.value as string | undefined) ?? name;
  return name;
}
