/**
 * The SQL of the Data page's forms (create a table; add, rename, retype or drop a column; add or
 * drop constraints and indexes), as pure functions (unit-tested under node). Identifiers are always
 * quoted; defaults and check conditions are SQL expressions typed by the person (the console is an
 * admin tool that runs SQL anyway) and are passed through as they are.
 */

/** A double-quoted SQL identifier. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** schema.name, both quoted */
export function qualifiedIdent(t: { schema: string; name: string }): string {
  return `${ident(t.schema)}.${ident(t.name)}`;
}

const list = (names: string[]) => names.map(ident).join(', ');

/** Column types offered by the forms (any other type name may be typed). */
export const COMMON_TYPES: readonly string[] = [
  'integer', 'bigint', 'smallint', 'serial', 'bigserial', 'text', 'varchar', 'boolean', 'numeric', 'real', 'double precision',
  'date', 'time', 'timetz', 'timestamp', 'timestamptz', 'interval', 'uuid', 'json', 'jsonb', 'bytea', 'inet', 'text[]', 'integer[]',
];

/** Suggested defaults per type (the form's datalist). */
export function suggestedDefaults(type: string): string[] {
  const t = type.trim().toLowerCase();
  if (t === 'uuid') return ['gen_random_uuid()'];
  if (/^timestamp|^date|^time/.test(t)) return ['now()'];
  if (t === 'boolean') return ['true', 'false'];
  if (/^(json|jsonb)$/.test(t)) return ["'{}'::jsonb", "'[]'::jsonb"];
  if (/int|numeric|real|double/.test(t)) return ['0'];
  return [];
}

/** A type name as typed: letters, digits, spaces, underscores, dots, quotes, brackets and (n, m). */
export function checkTypeName(type: string): string | undefined {
  const t = type.trim();
  if (!t) return 'choose a type';
  if (!/^[A-Za-z_"][\w ."]*(\(\s*\d+(\s*,\s*\d+)?\s*\))?(\[\])*$/.test(t)) return `not a type name: ${JSON.stringify(type)}`;
  return undefined;
}

export interface ColumnSpec {
  name: string;
  type: string;
  /** an SQL expression, '' for none */
  default: string;
  nullable: boolean;
  unique: boolean;
}

export const FK_ACTIONS = ['no action', 'restrict', 'cascade', 'set null', 'set default'] as const;
export type FkAction = (typeof FK_ACTIONS)[number];

export interface ForeignKeySpec {
  columns: string[];
  refSchema: string;
  refTable: string;
  refColumns: string[];
  onUpdate: FkAction;
  onDelete: FkAction;
}

export interface TableSpec {
  schema: string;
  name: string;
  columns: ColumnSpec[];
  primaryKey: string[];
  foreignKeys: ForeignKeySpec[];
  /** table-level unique constraints over several columns */
  uniqueKeys: string[][];
  checks: string[];
  comment: string;
}

function columnDef(c: ColumnSpec): string {
  let s = `${ident(c.name)} ${c.type.trim()}`;
  if (c.default.trim()) s += ` default ${c.default.trim()}`;
  if (!c.nullable) s += ' not null';
  if (c.unique) s += ' unique';
  return s;
}

function foreignKeyClause(fk: ForeignKeySpec): string {
  let s = `foreign key (${list(fk.columns)}) references ${qualifiedIdent({ schema: fk.refSchema, name: fk.refTable })} (${list(fk.refColumns)})`;
  if (fk.onUpdate !== 'no action') s += ` on update ${fk.onUpdate}`;
  if (fk.onDelete !== 'no action') s += ` on delete ${fk.onDelete}`;
  return s;
}

/** Problems that stop a table spec (empty when it can be created). */
export function checkTableSpec(spec: TableSpec): string[] {
  const out: string[] = [];
  if (!spec.name.trim()) out.push('the table needs a name');
  if (spec.columns.length === 0) out.push('the table needs at least one column');
  const seen = new Set<string>();
  spec.columns.forEach((c, i) => {
    if (!c.name.trim()) out.push(`column ${i + 1} needs a name`);
    else if (seen.has(c.name)) out.push(`two columns are named ${c.name}`);
    seen.add(c.name);
    const t = checkTypeName(c.type);
    if (t) out.push(`column ${c.name || i + 1}: ${t}`);
  });
  for (const k of spec.primaryKey) if (!seen.has(k)) out.push(`the primary key names no column ${k}`);
  spec.foreignKeys.forEach((fk, i) => {
    if (!fk.refTable) out.push(`foreign key ${i + 1}: choose the table it references`);
    if (fk.columns.length === 0 || fk.columns.length !== fk.refColumns.length || fk.columns.some((c) => !c) || fk.refColumns.some((c) => !c)) {
      out.push(`foreign key ${i + 1}: choose a referenced column for each column`);
    }
    for (const c of fk.columns) if (c && !seen.has(c)) out.push(`foreign key ${i + 1}: no column ${c}`);
  });
  return out;
}

/** CREATE TABLE (and COMMENT ON TABLE) for the spec. */
export function createTableSql(spec: TableSpec): string {
  const parts = spec.columns.map(columnDef);
  if (spec.primaryKey.length) parts.push(`primary key (${list(spec.primaryKey)})`);
  for (const u of spec.uniqueKeys) if (u.length) parts.push(`unique (${list(u)})`);
  for (const fk of spec.foreignKeys) parts.push(foreignKeyClause(fk));
  for (const c of spec.checks) if (c.trim()) parts.push(`check (${c.trim()})`);
  const table = qualifiedIdent(spec);
  let sql = `create table ${table} (\n  ${parts.join(',\n  ')}\n);`;
  if (spec.comment.trim()) sql += `\ncomment on table ${table} is ${literal(spec.comment.trim())};`;
  return sql;
}

function literal(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

type T = { schema: string; name: string };
const alter = (t: T) => `alter table ${qualifiedIdent(t)}`;

export const addColumnSql = (t: T, c: ColumnSpec) => `${alter(t)} add column ${columnDef(c)};`;
export const dropColumnSql = (t: T, column: string) => `${alter(t)} drop column ${ident(column)};`;
export const renameColumnSql = (t: T, from: string, to: string) => `${alter(t)} rename column ${ident(from)} to ${ident(to)};`;
export const renameTableSql = (t: T, to: string) => `${alter(t)} rename to ${ident(to)};`;
export const dropTableSql = (t: T) => `drop table ${qualifiedIdent(t)};`;

/** COMMENT ON TABLE (an empty comment removes it). */
export const commentTableSql = (t: T, comment: string) => `comment on table ${qualifiedIdent(t)} is ${comment.trim() ? literal(comment.trim()) : 'null'};`;

/** Changes the type of a column (converting its values with a cast). */
export function retypeColumnSql(t: T, column: string, type: string): string {
  return `${alter(t)} alter column ${ident(column)} type ${type.trim()} using ${ident(column)}::${type.trim()};`;
}

export function setDefaultSql(t: T, column: string, expression: string): string {
  return expression.trim()
    ? `${alter(t)} alter column ${ident(column)} set default ${expression.trim()};`
    : `${alter(t)} alter column ${ident(column)} drop default;`;
}

export const setNullableSql = (t: T, column: string, nullable: boolean) =>
  `${alter(t)} alter column ${ident(column)} ${nullable ? 'drop' : 'set'} not null;`;

/**
 * The statements that turn column `before` into `after` (name, type, default, nullability,
 * uniqueness via a constraint named <table>_<column>_key), in an order that works: the rename
 * first, then the rest on the new name.
 */
export function alterColumnSql(t: T, before: ColumnSpec, after: ColumnSpec): string[] {
  const out: string[] = [];
  let name = before.name;
  if (after.name !== before.name) {
    out.push(renameColumnSql(t, before.name, after.name));
    name = after.name;
  }
  if (after.type.trim() !== before.type.trim()) out.push(retypeColumnSql(t, name, after.type));
  if (after.default.trim() !== before.default.trim()) out.push(setDefaultSql(t, name, after.default));
  if (after.nullable !== before.nullable) out.push(setNullableSql(t, name, after.nullable));
  if (after.unique && !before.unique) out.push(`${alter(t)} add constraint ${ident(`${t.name}_${name}_key`)} unique (${ident(name)});`);
  return out;
}

export type ConstraintSpec =
  | { kind: 'primary key'; name: string; columns: string[] }
  | { kind: 'unique'; name: string; columns: string[] }
  | { kind: 'check'; name: string; expression: string }
  | { kind: 'foreign key'; name: string; fk: ForeignKeySpec };

export function addConstraintSql(t: T, c: ConstraintSpec): string {
  const named = c.name.trim() ? `constraint ${ident(c.name.trim())} ` : '';
  const body = c.kind === 'primary key' ? `primary key (${list(c.columns)})`
    : c.kind === 'unique' ? `unique (${list(c.columns)})`
      : c.kind === 'check' ? `check (${c.expression.trim()})`
        : foreignKeyClause(c.fk);
  return `${alter(t)} add ${named}${body};`;
}

export const dropConstraintSql = (t: T, name: string) => `${alter(t)} drop constraint ${ident(name)};`;

export const INDEX_METHODS = ['btree', 'hash', 'gin', 'gist', 'brin'] as const;

export interface IndexSpec {
  name: string;
  columns: string[];
  unique: boolean;
  method: (typeof INDEX_METHODS)[number];
}

export function createIndexSql(t: T, ix: IndexSpec): string {
  const name = ix.name.trim() ? `${ident(ix.name.trim())} ` : '';
  const using = ix.method === 'btree' ? '' : ` using ${ix.method}`;
  return `create ${ix.unique ? 'unique ' : ''}index ${name}on ${qualifiedIdent(t)}${using} (${list(ix.columns)});`;
}

export const dropIndexSql = (schema: string, name: string) => `drop index ${qualifiedIdent({ schema, name })};`;

// ---- migrations (svc console): names and the down SQL of each change ----------------------------

/** A migration name from parts (letters, digits, _ . - only; upstream's create_table_public_author style). */
export function migrationName(...parts: string[]): string {
  return parts.join('_').replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/_+/g, '_').replace(/^_|_$/g, '').slice(0, 100) || 'migration';
}

/** PostgreSQL's default name of a constraint (table_columns_key, …) for one added without a name. */
export function defaultConstraintName(t: T, c: ConstraintSpec, taken: string[] = []): string {
  const cols = c.kind === 'foreign key' ? c.fk.columns : c.kind === 'check' ? [] : c.columns;
  const suffix = c.kind === 'primary key' ? 'pkey' : c.kind === 'unique' ? 'key' : c.kind === 'check' ? 'check' : 'fkey';
  const base = c.kind === 'primary key' ? `${t.name}_pkey` : [t.name, ...cols, suffix].join('_');
  let name = base;
  for (let i = 1; taken.includes(name); i++) name = `${base}${i}`;
  return name;
}

/** PostgreSQL's default name of an index created without a name. */
export function defaultIndexName(t: T, columns: string[], taken: string[] = []): string {
  const base = [t.name, ...columns, 'idx'].join('_');
  let name = base;
  for (let i = 1; taken.includes(name); i++) name = `${base}${i}`;
  return name;
}

/** The down of editing a column from `before` to `after` (alterColumnSql the other way round). */
export function alterColumnDownSql(t: T, before: ColumnSpec & { uniqueConstraint?: string }, after: ColumnSpec): string[] {
  const out: string[] = [];
  if (after.unique && !before.unique) out.push(dropConstraintSql(t, `${t.name}_${after.name}_key`));
  out.push(...alterColumnSql(t, { ...after, unique: before.unique }, { ...before, unique: before.unique }));
  if (before.unique && !after.unique && before.uniqueConstraint) out.push(`${alter(t)} add constraint ${ident(before.uniqueConstraint)} unique (${ident(before.name)});`);
  return out;
}

/** The down of dropping a column: the column again (its data is gone). */
export function dropColumnDownSql(t: T, c: ColumnSpec): string {
  return `-- the column's values are not restored\n${addColumnSql(t, { ...c, unique: false, nullable: c.nullable || !c.default.trim() })}`;
}

/**
 * The down of dropping a table: the table again from what the console read of it (columns with
 * types, defaults and nullability, its constraints, indexes and comment; its rows are gone).
 */
export function recreateTableSql(t: {
  schema: string; name: string;
  columns: Array<{ name: string; type: string; nullable: boolean; default: string | null }>;
  constraints?: Array<{ name: string; type: string; definition: string }>;
  indexes?: Array<{ definition: string; constraint: string | null }>;
  comment?: string | null;
}): string {
  const out: string[] = ["-- the table's rows are not restored"];
  for (const c of t.columns) {
    const seq = /^nextval\('(.+)'::regclass\)$/.exec(c.default ?? '');
    if (seq) out.push(`create sequence if not exists ${seq[1]!.replace(/''/g, "'")};`);
  }
  const cols = t.columns.map((c) => `${ident(c.name)} ${c.type}${c.default ? ` default ${c.default}` : ''}${c.nullable ? '' : ' not null'}`);
  out.push(`create table ${qualifiedIdent(t)} (\n  ${cols.join(',\n  ')}\n);`);
  const order = ['p', 'u', 'c', 'x', 'f'];
  for (const k of [...(t.constraints ?? [])].sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type))) out.push(`${alter(t)} add constraint ${ident(k.name)} ${k.definition};`);
  for (const ix of t.indexes ?? []) if (!ix.constraint) out.push(`${ix.definition};`);
  if (t.comment) out.push(`comment on table ${qualifiedIdent(t)} is ${literal(t.comment)};`);
  return out.join('\n');
}
