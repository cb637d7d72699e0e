/**
 * A pure model of the metadata document for the property test
 * (test/property/metadata.test.ts). It knows the small database schema the
 * test creates (SCHEMA_SQL) and, for every /v1/query request the generator
 * can produce, predicts whether it succeeds and what `export_metadata`
 * returns afterwards. It is written from the specification (SPEC.md §2, §4,
 * the schema-metadata-api reference and Hasura v1.3 behaviour), not from the
 * server's code: it shares no code with src/.
 *
 * Rules worth knowing (each one is upstream behaviour):
 * - a relationship or computed field may not share its name with a column
 *   (by the column's PostgreSQL name or by its custom GraphQL name), with
 *   another relationship or with a computed field of the same table;
 * - custom column names must name existing columns and map no two columns to
 *   the same GraphQL name; custom root field names may not repeat in a table;
 * - a permission depends on the relationships its boolean expressions
 *   traverse (at any depth) and the tables they reach, a select permission on
 *   the computed fields it lists; a relationship on its remote table; a
 *   tracked function on the table it returns. Dropping/untracking something
 *   with dependents fails unless `cascade`, which drops the dependents too;
 * - `bulk` is all-or-nothing.
 */

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

// ---------------------------------------------------------------- database

export const SCHEMA_SQL = `
create table author (id serial primary key, name text, age int);
create table article (id serial primary key, title text, author_id int references author(id), published bool);
create view published_articles as select id, title, author_id, published from article where published;
create function search_articles(search text) returns setof article
  as $$ select * from article where title ilike ('%' || search || '%') $$ language sql stable;
create function my_articles(hasura_session json) returns setof article
  as $$ select * from article where author_id = (hasura_session ->> 'x-svc-user-id')::int $$ language sql stable;
create function author_full_name(author_row author) returns text
  as $$ select author_row.name $$ language sql stable;
`;

export const TABLES = ['article', 'author', 'published_articles'] as const;
export const COLUMNS: Record<string, string[]> = {
  author: ['id', 'name', 'age'],
  article: ['id', 'title', 'author_id', 'published'],
  published_articles: ['id', 'title', 'author_id', 'published'],
};
/** single-column foreign keys: table.column → referenced table */
export const FOREIGN_KEYS: Array<{ table: string; column: string; ref: string; refColumn: string }> = [
  { table: 'article', column: 'author_id', ref: 'author', refColumn: 'id' },
];
interface FunctionInfo {
  args: Array<{ name: string; type: string }>;
  /** SETOF this table, or a scalar */
  returnsSetOf?: string;
  volatile: boolean;
}
export const FUNCTIONS: Record<string, FunctionInfo> = {
  search_articles: { args: [{ name: 'search', type: 'text' }], returnsSetOf: 'article', volatile: false },
  my_articles: { args: [{ name: 'hasura_session', type: 'json' }], returnsSetOf: 'article', volatile: false },
  author_full_name: { args: [{ name: 'author_row', type: 'author' }], volatile: false },
};
export const PERMISSION_KINDS = ['insert', 'select', 'update', 'delete'] as const;
export type PermKind = (typeof PERMISSION_KINDS)[number];
const KNOWN_OPERATORS = new Set(['_eq', '_neq', '_gt', '_lt', '_gte', '_lte', '_in', '_nin', '_is_null', '_like', '_ilike']);
const ROOT_FIELD_KEYS = ['select', 'select_by_pk', 'select_aggregate', 'insert', 'insert_one', 'update', 'update_by_pk', 'delete', 'delete_by_pk'];
const GQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

// ---------------------------------------------------------------- state

export interface MRel {
  name: string;
  using: Obj;
  comment?: string;
}
export interface MComputedField {
  name: string;
  definition: Obj;
  comment?: string;
}
export interface MPerm {
  role: string;
  permission: Obj;
  comment?: string;
}
export interface MTable {
  name: string;
  custom_root_fields: Record<string, string>;
  custom_column_names: Record<string, string>;
  object_relationships: MRel[];
  array_relationships: MRel[];
  computed_fields: MComputedField[];
  insert_permissions: MPerm[];
  select_permissions: MPerm[];
  update_permissions: MPerm[];
  delete_permissions: MPerm[];
}
export interface MState {
  tables: MTable[];
  functions: Array<{ name: string; session_argument?: string }>;
  collections: Array<{ name: string; queries: Array<{ name: string; query: string }>; comment?: string }>;
  allowlist: string[];
}

export const emptyState = (): MState => ({ tables: [], functions: [], collections: [], allowlist: [] });

/** A request the model rejects (the server must answer 4xx). */
export class Reject extends Error {}
const reject = (why: string): never => {
  throw new Reject(why);
};
/** A request shape the model was not written for: a bug in the test itself. */
export class ModelGap extends Error {}

// ---------------------------------------------------------------- arg readers

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

class Args {
  private readonly seen = new Set<string>();
  constructor(
    readonly o: Obj,
    readonly what: string,
  ) {}
  static of(v: unknown, what: string): Args {
    if (!isObj(v)) reject(`${what}: args must be an object`);
    return new Args(v as Obj, what);
  }
  has(k: string): boolean {
    return this.o[k] !== undefined && this.o[k] !== null;
  }
  raw(k: string): Json | undefined {
    this.seen.add(k);
    return this.o[k];
  }
  str(k: string): string {
    const v = this.raw(k);
    if (typeof v !== 'string') return reject(`${this.what}: "${k}" must be a string`);
    if (v === '') reject(`${this.what}: "${k}" must not be empty`);
    return v;
  }
  optStr(k: string): string | undefined {
    const v = this.raw(k);
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') return reject(`${this.what}: "${k}" must be a string`);
    return v;
  }
  bool(k: string, dflt = false): boolean {
    const v = this.raw(k);
    if (v === undefined || v === null) return dflt;
    if (typeof v !== 'boolean') return reject(`${this.what}: "${k}" must be a boolean`);
    return v;
  }
  obj(k: string): Obj {
    const v = this.raw(k);
    if (!isObj(v)) return reject(`${this.what}: "${k}" must be an object`);
    return v;
  }
  /** a table name (string or {schema, name}); only the public schema exists here */
  table(k = 'table'): string {
    return tableName(this.raw(k), this.what);
  }
  done(): void {
    for (const k of Object.keys(this.o)) if (!this.seen.has(k)) reject(`${this.what}: unexpected key "${k}"`);
  }
}

function tableName(v: Json | undefined, what: string): string {
  if (typeof v === 'string' && v !== '') return v;
  if (isObj(v) && typeof v.name === 'string') {
    if (v.schema !== undefined && v.schema !== 'public') return `${String(v.schema)}.${v.name}`; // never exists
    return v.name;
  }
  return reject(`${what}: bad table name`);
}

const qn = (name: string) => ({ schema: 'public', name });

// ---------------------------------------------------------------- helpers over the state

function clone<T>(x: T): T {
  return structuredClone(x);
}

function findTable(s: MState, name: string): MTable {
  const t = s.tables.find((x) => x.name === name);
  if (!t) return reject(`table "${name}" is not tracked`);
  return t;
}
const isTracked = (s: MState, name: string) => s.tables.some((t) => t.name === name);
const allRels = (t: MTable) => [...t.object_relationships, ...t.array_relationships];
const perms = (t: MTable, k: PermKind): MPerm[] => t[`${k}_permissions`];

/** GraphQL names of the table's columns */
function gqlColumnNames(t: MTable): string[] {
  return COLUMNS[t.name]!.map((c) => t.custom_column_names[c] ?? c);
}

/** may a relationship / computed field named `name` be added to `t` (besides the ones it already has)? */
function fieldNameFree(t: MTable, name: string): boolean {
  if (COLUMNS[t.name]!.includes(name)) return false;
  if (gqlColumnNames(t).includes(name)) return false;
  if (allRels(t).some((r) => r.name === name)) return false;
  if (t.computed_fields.some((c) => c.name === name)) return false;
  return true;
}

/** the table a relationship points to */
export function relTarget(table: string, r: MRel): string {
  const u = r.using;
  if (isObj(u.manual_configuration)) return tableName(u.manual_configuration.remote_table, 'rel');
  const fk = u.foreign_key_constraint_on;
  if (typeof fk === 'string') return FOREIGN_KEYS.find((f) => f.table === table && f.column === fk)!.ref;
  if (isObj(fk)) return tableName(fk.table, 'rel');
  throw new ModelGap(`relationship ${r.name}: unknown using`);
}

interface ExpUse {
  /** relationships traversed: [table, name] */
  rels: Array<[string, string]>;
  /** tables reached through relationships */
  tables: Set<string>;
  /** scalar computed fields compared: [table, name] */
  cfs: Array<[string, string]>;
}

/** Validates a boolean expression on `table` (rejects), collecting what it uses. */
function useExp(s: MState, table: string, e: Json | undefined, use: ExpUse): void {
  if (!isObj(e)) return reject('boolean expression must be an object');
  const t = findTable(s, table);
  for (const [k, v] of Object.entries(e)) {
    if (k === '_and' || k === '_or') {
      if (!Array.isArray(v)) return reject(`${k} expects an array`);
      for (const x of v) useExp(s, table, x, use);
    } else if (k === '_not') {
      useExp(s, table, v, use);
    } else if (COLUMNS[table]!.includes(k)) {
      if (isObj(v)) {
        for (const op of Object.keys(v)) {
          if (!op.startsWith('_')) throw new ModelGap(`json comparison ${op}`);
          if (!KNOWN_OPERATORS.has(op)) reject(`unknown operator ${op}`);
        }
      }
    } else if (allRels(t).some((x) => x.name === k)) {
      const r = allRels(t).find((x) => x.name === k)!;
      const target = relTarget(table, r);
      use.rels.push([table, k]);
      use.tables.add(target);
      useExp(s, target, v, use);
    } else if (t.computed_fields.some((c) => c.name === k)) {
      // (an extension over Hasura v1.3, which has no computed fields in boolean expressions)
      use.cfs.push([table, k]);
      if (isObj(v)) for (const op of Object.keys(v)) if (!KNOWN_OPERATORS.has(op)) reject(`unknown operator ${op}`);
    } else {
      reject(`no such column exists : "${k}"`);
    }
  }
}

/** Everything a permission uses (rejects when it is invalid). */
function permissionUse(s: MState, table: string, kind: PermKind, p: Obj): ExpUse & { computedFields: string[] } {
  const use: ExpUse = { rels: [], tables: new Set(), cfs: [] };
  const t = findTable(s, table);
  const cols = (v: Json | undefined, required: boolean) => {
    if (v === undefined || v === null) {
      if (required) reject('columns required');
      return;
    }
    if (v === '*') return;
    if (!Array.isArray(v)) return reject('columns must be an array or "*"');
    for (const c of v) if (typeof c !== 'string' || !COLUMNS[table]!.includes(c)) reject(`column ${String(c)} does not exist`);
  };
  const presets = (v: Json | undefined) => {
    if (v === undefined || v === null) return;
    if (!isObj(v)) return reject('set must be an object');
    for (const c of Object.keys(v)) if (!COLUMNS[table]!.includes(c)) reject(`column ${c} does not exist`);
  };
  const known = (keys: string[]) => {
    for (const k of Object.keys(p)) if (!keys.includes(k)) reject(`unexpected key ${k}`);
  };
  let computedFields: string[] = [];
  switch (kind) {
    case 'select': {
      known(['columns', 'filter', 'computed_fields', 'limit', 'allow_aggregations']);
      cols(p.columns, true);
      if (p.filter === undefined) reject('filter required');
      useExp(s, table, p.filter, use);
      if (p.computed_fields !== undefined && p.computed_fields !== null) {
        if (!Array.isArray(p.computed_fields)) return reject('computed_fields must be an array');
        computedFields = p.computed_fields as string[];
        for (const c of computedFields) if (!t.computed_fields.some((x) => x.name === c)) reject(`computed field ${c} does not exist`);
      }
      if (p.limit !== undefined && p.limit !== null && (typeof p.limit !== 'number' || !Number.isInteger(p.limit) || p.limit < 0)) reject('bad limit');
      break;
    }
    case 'insert':
      known(['check', 'set', 'columns', 'backend_only']);
      if (p.check === undefined) reject('check required');
      useExp(s, table, p.check, use);
      cols(p.columns, false);
      presets(p.set);
      break;
    case 'update':
      known(['columns', 'filter', 'check', 'set']);
      cols(p.columns, true);
      if (p.filter === undefined) reject('filter required');
      useExp(s, table, p.filter, use);
      if (p.check !== undefined && p.check !== null) useExp(s, table, p.check, use);
      presets(p.set);
      break;
    case 'delete':
      known(['filter']);
      if (p.filter === undefined) reject('filter required');
      useExp(s, table, p.filter, use);
      break;
  }
  return { ...use, computedFields };
}

/** The permission as the server stores and exports it. */
function normalizePermission(kind: PermKind, p: Obj): Obj {
  const out: Obj = {};
  switch (kind) {
    case 'select':
      out.columns = p.columns!;
      if (Array.isArray(p.computed_fields) && p.computed_fields.length) out.computed_fields = p.computed_fields;
      out.filter = p.filter!;
      if (typeof p.limit === 'number') out.limit = p.limit;
      if (p.allow_aggregations === true) out.allow_aggregations = true;
      break;
    case 'insert':
      out.check = p.check!;
      if (isObj(p.set)) out.set = p.set;
      if (p.columns !== undefined && p.columns !== null) out.columns = p.columns;
      if (p.backend_only === true) out.backend_only = true;
      break;
    case 'update':
      out.columns = p.columns!;
      out.filter = p.filter!;
      out.check = isObj(p.check) ? p.check : null;
      if (isObj(p.set)) out.set = p.set;
      break;
    case 'delete':
      out.filter = p.filter!;
      break;
  }
  return out;
}

type ObjectRef =
  { kind: 'rel'; table: string; name: string } | { kind: 'perm'; table: string; perm: PermKind; role: string } | { kind: 'function'; name: string };

const refKey = (r: ObjectRef) => JSON.stringify(r);

/** Objects (outside `exceptTable`) depending on the given table / relationships / computed fields. */
function dependents(s: MState, target: { table?: string; rel?: [string, string]; computedField?: [string, string] }): ObjectRef[] {
  const out = new Map<string, ObjectRef>();
  const droppedRels: Array<[string, string]> = target.rel ? [target.rel] : [];
  // relationships into the table
  if (target.table) {
    for (const t of s.tables) {
      if (t.name === target.table) continue;
      for (const r of allRels(t)) {
        if (relTarget(t.name, r) === target.table) {
          out.set(refKey({ kind: 'rel', table: t.name, name: r.name }), { kind: 'rel', table: t.name, name: r.name });
          droppedRels.push([t.name, r.name]);
        }
      }
    }
    for (const f of s.functions) {
      if (FUNCTIONS[f.name]!.returnsSetOf === target.table) out.set(refKey({ kind: 'function', name: f.name }), { kind: 'function', name: f.name });
    }
  }
  // permissions reaching the table, traversing a dropped relationship, or listing the computed field
  for (const t of s.tables) {
    if (target.table && t.name === target.table) continue;
    for (const kind of PERMISSION_KINDS) {
      for (const p of perms(t, kind)) {
        const use = permissionUse(s, t.name, kind, p.permission);
        const hit =
          (target.table !== undefined && use.tables.has(target.table)) ||
          use.rels.some(([rt, rn]) => droppedRels.some(([dt, dn]) => dt === rt && dn === rn)) ||
          (target.computedField !== undefined &&
            ((target.computedField[0] === t.name && use.computedFields.includes(target.computedField[1])) ||
              use.cfs.some(([ct, cn]) => ct === target.computedField![0] && cn === target.computedField![1])));
        if (hit) {
          const ref: ObjectRef = { kind: 'perm', table: t.name, perm: kind, role: p.role };
          out.set(refKey(ref), ref);
        }
      }
    }
  }
  return [...out.values()];
}

function removeRef(s: MState, r: ObjectRef): void {
  if (r.kind === 'function') {
    s.functions = s.functions.filter((f) => f.name !== r.name);
    return;
  }
  const t = s.tables.find((x) => x.name === r.table);
  if (!t) return;
  if (r.kind === 'rel') {
    t.object_relationships = t.object_relationships.filter((x) => x.name !== r.name);
    t.array_relationships = t.array_relationships.filter((x) => x.name !== r.name);
  } else {
    t[`${r.perm}_permissions`] = perms(t, r.perm).filter((x) => x.role !== r.role);
  }
}

function dropOrFail(s: MState, deps: ObjectRef[], cascade: boolean, note?: (event: string) => void): void {
  if (deps.length === 0) return;
  if (!cascade) reject(`dependency error: ${deps.map(refKey).join(', ')}`);
  note?.(
    `cascade dropped ${deps
      .map((d) => d.kind)
      .sort()
      .join('+')}`,
  );
  for (const d of deps) removeRef(s, d);
}

/** Rewrites uses of relationship table.from → to in a boolean expression evaluated on `on`. */
function renameRelInExp(s: MState, on: string, e: Json, rel: [string, string], to: string): Json {
  if (!isObj(e)) return e;
  const t = s.tables.find((x) => x.name === on)!;
  const out: Obj = {};
  for (const [k, v] of Object.entries(e)) {
    if (k === '_and' || k === '_or') out[k] = (v as Json[]).map((x) => renameRelInExp(s, on, x, rel, to));
    else if (k === '_not') out[k] = renameRelInExp(s, on, v, rel, to);
    else if (COLUMNS[on]!.includes(k) || t.computed_fields.some((c) => c.name === k)) out[k] = v;
    else {
      const r = allRels(t).find((x) => x.name === k)!;
      const sub = renameRelInExp(s, relTarget(on, r), v, rel, to);
      out[on === rel[0] && k === rel[1] ? to : k] = sub;
    }
  }
  return out;
}

// ---------------------------------------------------------------- configuration

function parseConfiguration(table: string, crf: Json | undefined, ccn: Json | undefined): { crf: Record<string, string>; ccn: Record<string, string> } {
  const out = { crf: {} as Record<string, string>, ccn: {} as Record<string, string> };
  if (crf !== undefined && crf !== null) {
    if (!isObj(crf)) return reject('custom_root_fields must be an object');
    for (const [k, v] of Object.entries(crf)) {
      if (!ROOT_FIELD_KEYS.includes(k)) reject(`unknown root field ${k}`);
      if (v === null) continue;
      if (typeof v !== 'string' || !GQL_NAME.test(v)) reject(`not a GraphQL name: ${String(v)}`);
      out.crf[k] = v as string;
    }
    const values = Object.values(out.crf);
    if (new Set(values).size !== values.length) reject('duplicate custom root field names');
  }
  if (ccn !== undefined && ccn !== null) {
    if (!isObj(ccn)) return reject('custom_column_names must be an object');
    for (const [k, v] of Object.entries(ccn)) {
      if (typeof v !== 'string' || !GQL_NAME.test(v)) reject(`not a GraphQL name: ${String(v)}`);
      if (!(COLUMNS[table] ?? []).includes(k)) reject(`the custom field name was given for the column ${k}, but no such column exists`);
      out.ccn[k] = v as string;
    }
  }
  return out;
}

/** a table's configuration must not clash with its columns, relationships and computed fields */
function checkFields(t: MTable): void {
  const gql = gqlColumnNames(t);
  if (new Set(gql).size !== gql.length) reject(`columns of ${t.name} mapped to the same field name`);
  const others = [...allRels(t).map((r) => r.name), ...t.computed_fields.map((c) => c.name)];
  for (const n of others) if (gql.includes(n) || COLUMNS[t.name]!.includes(n)) reject(`field ${n} conflicts with a column`);
}

// ---------------------------------------------------------------- relationships

function parseUsing(kind: 'object' | 'array', v: Json | undefined): Obj {
  if (!isObj(v)) return reject('using must be an object');
  const hasFk = v.foreign_key_constraint_on !== undefined;
  const hasManual = v.manual_configuration !== undefined;
  if (hasFk === hasManual) reject('exactly one of foreign_key_constraint_on / manual_configuration');
  if (Object.keys(v).length !== 1) throw new ModelGap('using with extra keys');
  if (hasManual) {
    const m = v.manual_configuration;
    if (!isObj(m) || !isObj(m.column_mapping)) return reject('bad manual_configuration');
    const remote = tableName(m.remote_table, 'manual_configuration');
    for (const x of Object.values(m.column_mapping)) if (typeof x !== 'string') reject('bad column mapping');
    return { manual_configuration: { remote_table: qn(remote), column_mapping: m.column_mapping } };
  }
  const fk = v.foreign_key_constraint_on;
  if (kind === 'object') {
    if (typeof fk !== 'string') return reject('fk must be a column');
    return { foreign_key_constraint_on: fk };
  }
  if (!isObj(fk) || typeof fk.column !== 'string') return reject('fk must be {table, column}');
  return { foreign_key_constraint_on: { table: qn(tableName(fk.table, 'fk')), column: fk.column } };
}

/** the relationship resolves against the database and the tracked tables */
function checkRelationship(s: MState, table: string, kind: 'object' | 'array', using: Obj): void {
  if (isObj(using.manual_configuration)) {
    const m = using.manual_configuration as { remote_table: { name: string }; column_mapping: Record<string, string> };
    const remote = m.remote_table.name;
    if (!isTracked(s, remote)) reject(`remote table ${remote} is not tracked`);
    for (const [l, r] of Object.entries(m.column_mapping)) {
      if (!COLUMNS[table]!.includes(l)) reject(`no such column ${l}`);
      if (!COLUMNS[remote]!.includes(r)) reject(`no such column ${r}`);
    }
    return;
  }
  const fk = using.foreign_key_constraint_on;
  if (kind === 'object') {
    const col = fk as string;
    if (!COLUMNS[table]!.includes(col)) reject(`no such column ${col}`);
    const f = FOREIGN_KEYS.filter((x) => x.table === table && x.column === col);
    if (f.length !== 1) reject('no foreign constraint exists on the given column');
    if (!isTracked(s, f[0]!.ref)) reject(`table ${f[0]!.ref} is not tracked`);
    return;
  }
  const { table: rt, column } = fk as { table: { name: string }; column: string };
  if (!isTracked(s, rt.name)) reject(`table ${rt.name} is not tracked`);
  if (!COLUMNS[rt.name]!.includes(column)) reject(`no such column ${column}`);
  const f = FOREIGN_KEYS.filter((x) => x.table === rt.name && x.column === column && x.ref === table);
  if (f.length !== 1) reject('no foreign constraint exists on the given column');
}

// ---------------------------------------------------------------- functions / computed fields

function checkComputedField(table: string, def: Obj): Obj {
  const a = new Args(def, 'computed field definition');
  const fn = functionName(a.raw('function'));
  const tableArgument = a.optStr('table_argument');
  const sessionArgument = a.optStr('session_argument');
  a.done();
  const f = FUNCTIONS[fn];
  if (!f) return reject(`no such function ${fn}`);
  if (f.args.length === 0 || f.volatile) reject('unusable function');
  const idx = tableArgument === undefined ? 0 : f.args.findIndex((x) => x.name === tableArgument);
  if (idx < 0) reject(`${tableArgument} is not an input argument`);
  if (f.args[idx]!.type !== table) reject('table argument is not the table');
  if (sessionArgument !== undefined) {
    const sa = f.args.find((x) => x.name === sessionArgument);
    if (!sa || sa.type !== 'json') reject('bad session argument');
  }
  if (f.returnsSetOf) throw new ModelGap('table-returning computed fields are not modelled');
  const out: Obj = { function: qn(fn) };
  if (tableArgument !== undefined) out.table_argument = tableArgument;
  if (sessionArgument !== undefined) out.session_argument = sessionArgument;
  return out;
}

function functionName(v: Json | undefined): string {
  if (typeof v === 'string' && v !== '') return v;
  if (isObj(v) && typeof v.name === 'string') return v.schema !== undefined && v.schema !== 'public' ? `${String(v.schema)}.${v.name}` : v.name;
  return reject('bad function name');
}

function trackFunction(s: MState, fn: string, sessionArgument: string | undefined): void {
  if (s.functions.some((f) => f.name === fn)) reject(`function ${fn} already tracked`);
  const f = FUNCTIONS[fn];
  if (!f) return reject(`no such function ${fn}`);
  if (!f.returnsSetOf || f.volatile) reject(`function ${fn} cannot be tracked`);
  if (!isTracked(s, f.returnsSetOf!)) reject(`the returning table ${f.returnsSetOf} is not tracked`);
  if (sessionArgument !== undefined) {
    const a = f.args.find((x) => x.name === sessionArgument);
    if (!a || a.type !== 'json') reject('bad session argument');
  }
  s.functions.push(sessionArgument !== undefined ? { name: fn, session_argument: sessionArgument } : { name: fn });
}

// ---------------------------------------------------------------- collections

/** a syntax check good enough for the texts the generator writes */
function validQuery(q: string): boolean {
  let depth = 0;
  for (const ch of q) {
    if (ch === '{') depth++;
    if (ch === '}') depth--;
    if (depth < 0) return false;
  }
  return depth === 0 && /^\s*(query|mutation|subscription)?\s*[A-Za-z_0-9]*\s*\{/.test(q) && /\}\s*$/.test(q) && !/\{\s*\}/.test(q);
}

function parseQueries(v: Json | undefined): Array<{ name: string; query: string }> {
  if (!isObj(v) || !Array.isArray(v.queries)) return reject('definition.queries must be an array');
  if (Object.keys(v).length !== 1) reject('unexpected key in definition');
  const seen = new Set<string>();
  return v.queries.map((q) => {
    const a = Args.of(q, 'query');
    const name = a.str('name');
    const query = a.raw('query');
    a.done();
    if (typeof query !== 'string') return reject('query must be a string');
    if (!validQuery(query)) reject('not a valid graphql query');
    if (seen.has(name)) reject(`duplicate query ${name}`);
    seen.add(name);
    return { name, query };
  });
}

function findCollection(s: MState, name: string) {
  const c = s.collections.find((x) => x.name === name);
  if (!c) return reject(`collection ${name} does not exist`);
  return c;
}

// ---------------------------------------------------------------- applying requests

export interface Request {
  type: string;
  version?: number;
  args: Json;
}

/**
 * Applies one request: returns the new state (the input is not modified) or
 * throws Reject. `bulk` applies all or nothing.
 */
export function apply(state: MState, req: Request, events?: Map<string, number>): MState {
  const s = clone(state);
  if (req.type === 'bulk') {
    if (!Array.isArray(req.args)) return reject('bulk args must be an array');
    let cur = s;
    for (const r of req.args) cur = apply(cur, r as unknown as Request, events);
    return cur;
  }
  const note = (e: string) => events?.set(e, (events.get(e) ?? 0) + 1);
  try {
    applyOne(s, req, note);
  } catch (e) {
    if (e instanceof Reject && e.message.startsWith('dependency error')) note(`${req.type}: dependency error`);
    throw e;
  }
  return s;
}

function applyOne(s: MState, req: Request, note: (event: string) => void): void {
  const version = req.version ?? 1;
  const args = req.args;
  switch (req.type) {
    case 'track_table': {
      let table: string;
      let crf: Json | undefined;
      let ccn: Json | undefined;
      let isEnum = false;
      if (version === 1 && typeof args === 'string') table = args;
      else if (version === 1 && isObj(args) && !('table' in args)) {
        table = tableName({ schema: args.schema ?? 'public', name: args.name ?? null }, 'track_table');
        isEnum = args.is_enum === true;
      } else {
        const a = Args.of(args, 'track_table');
        table = a.table();
        isEnum = a.bool('is_enum');
        const cfg = a.raw('configuration');
        a.done();
        if (cfg !== undefined && cfg !== null) {
          if (!isObj(cfg)) return void reject('configuration must be an object');
          crf = cfg.custom_root_fields;
          ccn = cfg.custom_column_names;
        }
      }
      if (isTracked(s, table)) reject(`view/table already tracked : ${table}`);
      if (!COLUMNS[table]) reject(`no such table/view exists in postgres : ${table}`);
      if (isEnum) reject(`${table} cannot be used as an enum`);
      const cfg = parseConfiguration(table, crf, ccn);
      const t: MTable = {
        name: table,
        custom_root_fields: cfg.crf,
        custom_column_names: cfg.ccn,
        object_relationships: [],
        array_relationships: [],
        computed_fields: [],
        insert_permissions: [],
        select_permissions: [],
        update_permissions: [],
        delete_permissions: [],
      };
      checkFields(t);
      s.tables.push(t);
      return;
    }
    case 'untrack_table': {
      const a = Args.of(args, 'untrack_table');
      const table = a.table();
      const cascade = a.bool('cascade');
      a.done();
      findTable(s, table);
      dropOrFail(s, dependents(s, { table }), cascade, (e) => note(`untrack_table: ${e}`));
      s.tables = s.tables.filter((t) => t.name !== table);
      return;
    }
    case 'set_table_custom_fields': {
      if (version !== 2) throw new ModelGap('set_table_custom_fields v1');
      const a = Args.of(args, 'set_table_custom_fields');
      const table = a.table();
      const crf = a.raw('custom_root_fields');
      const ccn = a.raw('custom_column_names');
      a.done();
      const cfg = parseConfiguration(table, crf, ccn);
      const t = findTable(s, table);
      t.custom_root_fields = cfg.crf;
      t.custom_column_names = cfg.ccn;
      checkFields(t);
      return;
    }
    case 'create_object_relationship':
    case 'create_array_relationship': {
      const kind = req.type === 'create_object_relationship' ? 'object' : 'array';
      const a = Args.of(args, req.type);
      const table = a.table();
      const name = a.str('name');
      const using = parseUsing(kind, a.raw('using'));
      const comment = a.optStr('comment');
      a.done();
      const t = findTable(s, table);
      if (!fieldNameFree(t, name)) reject(`field ${name} already exists on ${table}`);
      checkRelationship(s, table, kind, using);
      const rel: MRel = comment !== undefined ? { name, using, comment } : { name, using };
      (kind === 'object' ? t.object_relationships : t.array_relationships).push(rel);
      return;
    }
    case 'drop_relationship': {
      const a = Args.of(args, 'drop_relationship');
      const table = a.table();
      const name = a.str('relationship');
      const cascade = a.bool('cascade');
      a.done();
      const t = findTable(s, table);
      if (!allRels(t).some((r) => r.name === name)) reject(`relationship ${name} does not exist`);
      dropOrFail(s, dependents(s, { rel: [table, name] }), cascade, (e) => note(`drop_relationship: ${e}`));
      removeRef(s, { kind: 'rel', table, name });
      return;
    }
    case 'set_relationship_comment': {
      const a = Args.of(args, 'set_relationship_comment');
      const table = a.table();
      const name = a.str('relationship');
      const comment = a.optStr('comment');
      a.done();
      const r = allRels(findTable(s, table)).find((x) => x.name === name);
      if (!r) return void reject(`relationship ${name} does not exist`);
      if (comment === undefined) delete r.comment;
      else r.comment = comment;
      return;
    }
    case 'rename_relationship': {
      const a = Args.of(args, 'rename_relationship');
      const table = a.table();
      const name = a.str('name');
      const newName = a.str('new_name');
      a.done();
      const t = findTable(s, table);
      const r = allRels(t).find((x) => x.name === name);
      if (!r) return void reject(`relationship ${name} does not exist`);
      if (!fieldNameFree(t, newName)) reject(`field ${newName} already exists on ${table}`);
      // every permission traversing the relationship is rewritten (before the rename: expressions are read with the old name)
      const rewritten = s.tables.map((pt) =>
        PERMISSION_KINDS.map((kind) =>
          perms(pt, kind).map((p) => {
            const q = clone(p.permission);
            for (const key of ['filter', 'check'] as const) if (isObj(q[key])) q[key] = renameRelInExp(s, pt.name, q[key]!, [table, name], newName);
            return q;
          }),
        ),
      );
      s.tables.forEach((pt, i) =>
        PERMISSION_KINDS.forEach((kind, j) =>
          perms(pt, kind).forEach((p, k) => {
            if (JSON.stringify(p.permission) !== JSON.stringify(rewritten[i]![j]![k]!))
              note(`rename_relationship: rewrote a permission of ${pt.name === table ? 'its table' : 'another table'}`);
            p.permission = rewritten[i]![j]![k]!;
          }),
        ),
      );
      r.name = newName;
      return;
    }
    case 'create_insert_permission':
    case 'create_select_permission':
    case 'create_update_permission':
    case 'create_delete_permission': {
      const kind = req.type.split('_')[1] as PermKind;
      const a = Args.of(args, req.type);
      const table = a.table();
      const role = a.str('role');
      const permission = a.obj('permission');
      const comment = a.optStr('comment');
      a.done();
      const t = findTable(s, table);
      if (perms(t, kind).some((p) => p.role === role)) reject(`${kind} permission for ${role} already exists`);
      if (role === 'admin') reject('cannot define permission for admin role');
      permissionUse(s, table, kind, permission);
      const p: MPerm = { role, permission: normalizePermission(kind, permission) };
      if (comment !== undefined) p.comment = comment;
      perms(t, kind).push(p);
      return;
    }
    case 'drop_insert_permission':
    case 'drop_select_permission':
    case 'drop_update_permission':
    case 'drop_delete_permission': {
      const kind = req.type.split('_')[1] as PermKind;
      const a = Args.of(args, req.type);
      const table = a.table();
      const role = a.str('role');
      a.done();
      const t = findTable(s, table);
      if (!perms(t, kind).some((p) => p.role === role)) reject(`${kind} permission for ${role} does not exist`);
      removeRef(s, { kind: 'perm', table, perm: kind, role });
      return;
    }
    case 'set_permission_comment': {
      const a = Args.of(args, 'set_permission_comment');
      const table = a.table();
      const role = a.str('role');
      const type = a.str('type');
      const comment = a.optStr('comment');
      a.done();
      if (!(PERMISSION_KINDS as readonly string[]).includes(type)) reject(`bad permission type ${type}`);
      const t = findTable(s, table);
      const p = perms(t, type as PermKind).find((x) => x.role === role);
      if (!p) return void reject(`${type} permission for ${role} does not exist`);
      if (comment === undefined) delete p.comment;
      else p.comment = comment;
      return;
    }
    case 'add_computed_field': {
      const a = Args.of(args, 'add_computed_field');
      const table = a.table();
      const name = a.str('name');
      const def = a.obj('definition');
      const comment = a.optStr('comment');
      a.done();
      const t = findTable(s, table);
      if (!fieldNameFree(t, name)) reject(`field ${name} already exists on ${table}`);
      const definition = checkComputedField(table, def);
      t.computed_fields.push(comment !== undefined ? { name, definition, comment } : { name, definition });
      return;
    }
    case 'drop_computed_field': {
      const a = Args.of(args, 'drop_computed_field');
      const table = a.table();
      const name = a.str('name');
      const cascade = a.bool('cascade');
      a.done();
      const t = findTable(s, table);
      if (!t.computed_fields.some((c) => c.name === name)) reject(`computed field ${name} does not exist`);
      dropOrFail(s, dependents(s, { computedField: [table, name] }), cascade, (e) => note(`drop_computed_field: ${e}`));
      t.computed_fields = t.computed_fields.filter((c) => c.name !== name);
      return;
    }
    case 'track_function': {
      if (version === 1) return trackFunction(s, functionName(args), undefined);
      const a = Args.of(args, 'track_function');
      const fn = functionName(a.raw('function'));
      const cfg = a.raw('configuration');
      a.done();
      let sessionArgument: string | undefined;
      if (cfg !== undefined && cfg !== null) {
        const c = Args.of(cfg, 'configuration');
        sessionArgument = c.optStr('session_argument');
        if (sessionArgument === '') reject('empty session_argument');
        c.done();
      }
      return trackFunction(s, fn, sessionArgument);
    }
    case 'untrack_function': {
      const fn = functionName(args);
      if (!s.functions.some((f) => f.name === fn)) reject(`function ${fn} is not tracked`);
      s.functions = s.functions.filter((f) => f.name !== fn);
      return;
    }
    case 'create_query_collection': {
      const a = Args.of(args, 'create_query_collection');
      const name = a.str('name');
      const queries = parseQueries(a.raw('definition'));
      const comment = a.optStr('comment');
      a.done();
      if (s.collections.some((c) => c.name === name)) reject(`collection ${name} already exists`);
      s.collections.push(comment !== undefined ? { name, queries, comment } : { name, queries });
      return;
    }
    case 'drop_query_collection': {
      const a = Args.of(args, 'drop_query_collection');
      const name = a.str('collection');
      const cascade = a.raw('cascade');
      a.done();
      if (typeof cascade !== 'boolean') reject('cascade is required');
      findCollection(s, name);
      if (s.allowlist.includes(name)) {
        if (!cascade) reject(`collection ${name} is in the allowlist`);
        s.allowlist = s.allowlist.filter((c) => c !== name);
      }
      s.collections = s.collections.filter((c) => c.name !== name);
      return;
    }
    case 'add_query_to_collection': {
      const a = Args.of(args, 'add_query_to_collection');
      const collection = a.str('collection_name');
      const name = a.str('query_name');
      const query = a.raw('query');
      a.done();
      if (typeof query !== 'string' || !validQuery(query)) reject('not a valid graphql query');
      const c = findCollection(s, collection);
      if (c.queries.some((q) => q.name === name)) reject(`query ${name} already exists`);
      c.queries.push({ name, query: query as string });
      return;
    }
    case 'drop_query_from_collection': {
      const a = Args.of(args, 'drop_query_from_collection');
      const collection = a.str('collection_name');
      const name = a.str('query_name');
      a.done();
      const c = findCollection(s, collection);
      if (!c.queries.some((q) => q.name === name)) reject(`query ${name} does not exist`);
      c.queries = c.queries.filter((q) => q.name !== name);
      return;
    }
    case 'add_collection_to_allowlist': {
      const a = Args.of(args, 'add_collection_to_allowlist');
      const name = a.str('collection');
      a.done();
      findCollection(s, name);
      if (!s.allowlist.includes(name)) s.allowlist.push(name);
      return;
    }
    case 'drop_collection_from_allowlist': {
      const a = Args.of(args, 'drop_collection_from_allowlist');
      const name = a.str('collection');
      a.done();
      if (!s.allowlist.includes(name)) reject(`collection ${name} is not in the allowlist`);
      s.allowlist = s.allowlist.filter((c) => c !== name);
      return;
    }
    case 'replace_metadata': {
      // only ever called with an export of the current state: a no-op
      if (JSON.stringify(sortKeys(args)) !== JSON.stringify(sortKeys(exportState(s) as Json))) {
        throw new ModelGap('replace_metadata with anything but the current export');
      }
      return;
    }
    default:
      if (req.type.startsWith('no_such_')) return void reject(`unknown type ${req.type}`);
      throw new ModelGap(`request type ${req.type} is not modelled`);
  }
}

// ---------------------------------------------------------------- export

const byKey =
  <T>(key: (x: T) => string) =>
  (a: T, b: T) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;

/** What export_metadata must return for this state. */
export function exportState(s: MState): Obj {
  const out: Obj = { version: 2 };
  out.tables = [...s.tables].sort(byKey((t) => t.name)).map((t) => {
    const o: Obj = { table: qn(t.name) };
    if (Object.keys(t.custom_root_fields).length || Object.keys(t.custom_column_names).length) {
      o.configuration = { custom_root_fields: { ...t.custom_root_fields }, custom_column_names: { ...t.custom_column_names } };
    }
    const named = <T extends { name: string }>(k: string, xs: T[], f: (x: T) => Obj) => {
      if (xs.length) o[k] = [...xs].sort(byKey((x) => x.name)).map(f);
    };
    const rel = (r: MRel): Obj => (r.comment !== undefined ? { name: r.name, using: r.using, comment: r.comment } : { name: r.name, using: r.using });
    named('object_relationships', t.object_relationships, rel);
    named('array_relationships', t.array_relationships, rel);
    named('computed_fields', t.computed_fields, (c): Obj =>
      c.comment !== undefined ? { name: c.name, definition: c.definition, comment: c.comment } : { name: c.name, definition: c.definition },
    );
    for (const kind of PERMISSION_KINDS) {
      const ps = perms(t, kind);
      if (ps.length) {
        o[`${kind}_permissions`] = [...ps]
          .sort(byKey((p) => p.role))
          .map((p): Obj =>
            p.comment !== undefined ? { role: p.role, permission: p.permission, comment: p.comment } : { role: p.role, permission: p.permission },
          );
      }
    }
    return o;
  });
  if (s.functions.length) {
    out.functions = [...s.functions]
      .sort(byKey((f) => f.name))
      .map((f): Obj =>
        f.session_argument !== undefined ? { function: qn(f.name), configuration: { session_argument: f.session_argument } } : { function: qn(f.name) },
      );
  }
  if (s.collections.length) {
    out.query_collections = [...s.collections].sort(byKey((c) => c.name)).map((c) => {
      const o: Obj = { name: c.name, definition: { queries: c.queries.map((q) => ({ name: q.name, query: q.query })) } };
      if (c.comment !== undefined) o.comment = c.comment;
      return o;
    });
  }
  if (s.allowlist.length) out.allowlist = [...s.allowlist].sort().map((c) => ({ collection: c }));
  return out;
}

/** JSON with object keys sorted recursively (for byte-for-byte comparisons). */
export function sortKeys(x: unknown): Json {
  if (Array.isArray(x)) return x.map(sortKeys);
  if (x && typeof x === 'object') {
    const out: Obj = {};
    for (const k of Object.keys(x).sort()) out[k] = sortKeys((x as Record<string, unknown>)[k]);
    return out;
  }
  return x as Json;
}

// ---------------------------------------------------------------- queries for the generator

export const model = { findTable: (s: MState, n: string) => s.tables.find((t) => t.name === n), allRels, perms, isTracked, gqlColumnNames };
