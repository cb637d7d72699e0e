/**
 * A schema cache built from a hand-written introspection (no database), for
 * SQL snapshot tests: GraphQL → IR → exact SQL.
 */
import type { ColumnInfo, DbIntrospection, TableIntrospection } from '../../src/model/introspection.js';
import { DocumentContext, coerceVariables, selectOperation } from '../../src/ir/document.js';
import { emptyMetadata, emptyTable, type Metadata, type TableMetadata } from '../../src/model/metadata.js';
import { buildSchemaCache } from '../../src/schema/build.js';
import { getRoleSchema } from '../../src/schema/graphql/schema.js';
import type { SchemaCache } from '../../src/schema/model.js';
import { compileSql } from '../../src/sql/ast.js';
import { fieldStatementSql } from '../../src/sql/select.js';
import { compileMutation } from '../../src/sql/mutation.js';
import { operationRootFields } from '../../src/execute/plan.js';
import { parse } from 'graphql';

const TYPES: Record<string, string> = { int4: 'N', int8: 'N', text: 'S', bool: 'B', jsonb: 'U', timestamptz: 'D', numeric: 'N', geometry: 'U', geography: 'U' };

export function col(name: string, type: string, nullable = true): ColumnInfo {
  return {
    name,
    attnum: 0,
    type,
    typeSchema: type === 'geometry' || type === 'geography' ? 'public' : 'pg_catalog',
    typeOid: 0,
    category: TYPES[type] ?? 'U',
    formatted: type,
    nullable,
    hasDefault: false,
    isIdentity: false,
    isGenerated: false,
    description: null,
  };
}

export function tbl(name: string, columns: ColumnInfo[], pk: string[] | null, fks: TableIntrospection['foreignKeys'] = []): TableIntrospection {
  columns.forEach((c, i) => (c.attnum = i + 1));
  return {
    oid: 0,
    schema: 'public',
    name,
    kind: 'r',
    description: null,
    columns,
    primaryKey: pk ? { name: `${name}_pkey`, columns: pk } : null,
    uniqueConstraints: [],
    foreignKeys: fks,
    insertable: true,
    updatable: true,
    deletable: true,
  };
}

/** author(id, name, rating) ← article(id, title, author_id, tags, is_published) */
export function blogCache(patch?: (md: Metadata) => void): SchemaCache {
  const db: DbIntrospection = {
    tables: new Map(),
    functions: new Map(),
    functionsByOid: new Map(),
    scalarTypes: new Set(['int4', 'int8', 'text', 'bool', 'jsonb', 'numeric']),
  };
  db.tables.set('public.author', tbl('author', [col('id', 'int4', false), col('name', 'text'), col('rating', 'int8')], ['id']));
  db.tables.set(
    'public.article',
    tbl(
      'article',
      [col('id', 'int4', false), col('title', 'text'), col('author_id', 'int4', false), col('tags', 'jsonb'), col('is_published', 'bool')],
      ['id'],
      [{ oid: 1, name: 'article_author_id_fkey', columns: ['author_id'], refTable: { schema: 'public', name: 'author' }, refColumns: ['id'] }],
    ),
  );
  const md = emptyMetadata();
  const author: TableMetadata = {
    ...emptyTable({ schema: 'public', name: 'author' }),
    array_relationships: [{ name: 'articles', using: { foreign_key_constraint_on: { table: { schema: 'public', name: 'article' }, column: 'author_id' } } }],
    select_permissions: [{ role: 'user', permission: { columns: ['id', 'name'], filter: { id: 'X-Svc-User-Id' }, limit: 10 } }],
  };
  const article: TableMetadata = {
    ...emptyTable({ schema: 'public', name: 'article' }),
    object_relationships: [{ name: 'author', using: { foreign_key_constraint_on: 'author_id' } }],
    select_permissions: [
      {
        role: 'user',
        permission: {
          columns: ['id', 'title', 'author_id'],
          filter: { _or: [{ author_id: 'X-Svc-User-Id' }, { is_published: true }] },
          allow_aggregations: true,
        },
      },
    ],
  };
  md.tables.push(author, article);
  patch?.(md);
  return buildSchemaCache(md, db, 1);
}

/** The SQL of each root field of a query, as explain would show it (parameters numbered). */
export function sqlOf(cache: SchemaCache, role: string, query: string, variables: Record<string, unknown> = {}, stringifyNumerics = false): string[] {
  const rs = getRoleSchema(cache, role);
  const op = selectOperation(parse(query), undefined);
  const vars = coerceVariables(rs.schema, op.def, variables);
  const { fields } = operationRootFields(rs, op, vars);
  return fields.map((f) => compileSql(fieldStatementSql(f, { stringifyNumerics })).text);
}

export { DocumentContext };

/** The statements of each mutation root field: `write`, then `output` when the response needs a second statement. */
export function mutationSqlOf(cache: SchemaCache, role: string, query: string, variables: Record<string, unknown> = {}): string[][] {
  const rs = getRoleSchema(cache, role);
  const op = selectOperation(parse(query), undefined);
  const vars = coerceVariables(rs.schema, op.def, variables);
  const { fields } = operationRootFields(rs, op, vars);
  return fields.map((f) => {
    if (f.kind !== 'mutation') return [];
    const c = compileMutation(f.mutation, f.output, { stringifyNumerics: false });
    if (c.kind === 'constant') return [c.json];
    return [compileSql(c.write).text, ...(c.output ? [compileSql(c.output).text] : [])];
  });
}
