/**
 * What database introspection (catalog/introspect.ts) reports: the user schemas' tables, views,
 * columns, keys, foreign keys and functions, as plain data.
 */
export interface ColumnInfo {
  name: string;
  attnum: number;
  /** the type's name as PostgreSQL spells it (`int4`, `text`, `_text` for arrays, `geometry`) */
  type: string;
  typeSchema: string;
  typeOid: number;
  /** pg_type.typcategory: N numeric, S string, B bool, D datetime, A array, U user, E enum, ... */
  category: string;
  /** element type for arrays */
  elemType?: string;
  /** the type as format_type shows it (`integer[]`, `character varying(3)`) */
  formatted: string;
  nullable: boolean;
  hasDefault: boolean;
  isIdentity: boolean;
  isGenerated: boolean;
  description: string | null;
  enumValues?: string[];
}

export interface ForeignKeyInfo {
  /** the constraint's oid: a foreign key dropped and created again is another one */
  oid: number;
  name: string;
  columns: string[];
  refTable: { schema: string; name: string };
  refColumns: string[];
}

export interface TableIntrospection {
  oid: number;
  schema: string;
  name: string;
  /** r table, v view, m materialized view, f foreign table, p partitioned table */
  kind: 'r' | 'v' | 'm' | 'f' | 'p';
  description: string | null;
  columns: ColumnInfo[];
  primaryKey: { name: string; columns: string[] } | null;
  uniqueConstraints: Array<{ name: string; columns: string[] }>;
  foreignKeys: ForeignKeyInfo[];
  /** views: whether INSERT/UPDATE/DELETE are possible (auto-updatable or have rules/triggers) */
  insertable: boolean;
  updatable: boolean;
  deletable: boolean;
}

export interface FunctionIntrospection {
  oid: number;
  schema: string;
  name: string;
  volatility: 'i' | 's' | 'v';
  returnsSet: boolean;
  returnType: { schema: string; name: string; isTable: boolean; category: string };
  args: Array<{ name: string | null; type: string; typeSchema: string; mode: string }>;
  defaultArgs: number;
  description: string | null;
  /** another function with the same name exists (overloads are not supported) */
  overloaded: boolean;
}

export interface DbIntrospection {
  tables: Map<string, TableIntrospection>;
  /** by `schema.name`; of overloaded functions the one with the lowest oid */
  functions: Map<string, FunctionIntrospection>;
  /** every function, overloads included, by oid (run_sql compares them before and after) */
  functionsByOid: Map<number, FunctionIntrospection>;
  /** names of base, enum and domain types (custom types may reuse them as scalars) */
  scalarTypes: Set<string>;
}
