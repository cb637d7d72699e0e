/** Reading the database's tables (run_sql, read-only) and the metadata; tracking tables. */
import { query, runSql, sqlRows, type MigrationHint } from '../api';
import { functionsSql, introspectionSql, SCHEMAS_SQL, type FunctionInfo, type Metadata, type QualifiedName, type TableInfo } from './model';

export async function loadSchemas(): Promise<string[]> {
  return sqlRows(await runSql(SCHEMAS_SQL, { readOnly: true })).map((r) => r.nspname!);
}

export async function loadTables(schema?: string): Promise<TableInfo[]> {
  const rows = sqlRows(await runSql(introspectionSql(schema), { readOnly: true }));
  return JSON.parse(rows[0]?.tables ?? '[]') as TableInfo[];
}

export async function loadFunctions(): Promise<FunctionInfo[]> {
  const rows = sqlRows(await runSql(functionsSql(), { readOnly: true }));
  return JSON.parse(rows[0]?.functions ?? '[]') as FunctionInfo[];
}

/**
 * Runs DDL (not read-only); `cascade` lets it drop the metadata that depends on what it drops.
 * `hint`: the migration's name and down SQL when the console records into a project.
 */
export function runDdl(sql: string, cascade = false, hint?: MigrationHint): Promise<unknown> {
  return runSql(sql, { cascade, ...hint });
}

export function loadMetadata(): Promise<Metadata> {
  return query<Metadata>('export_metadata', {});
}

export function trackTable(t: QualifiedName): Promise<unknown> {
  return query('track_table', { table: { schema: t.schema, name: t.name } });
}

/** Untracks with cascade: its relationships and permissions (and those pointing at it) go too. */
export function untrackTable(t: QualifiedName): Promise<unknown> {
  return query('untrack_table', { table: { schema: t.schema, name: t.name }, cascade: true });
}
