/**
 * A scratch database with a schema cache built from SQL + metadata, and an
 * ExecContext to call the executor directly (no HTTP server).
 */
import { introspect } from '../../src/catalog/introspect.js';
import { defaultConfig, type Config } from '../../src/config/config.js';
import { openDb, type Db } from '../../src/db/db.js';
import type { ExecContext } from '../../src/execute/interface.js';
import { emptyMetadata, emptyTable, type Metadata, type QualifiedTable, type TableMetadata } from '../../src/metadata/types.js';
import { buildSchemaCache, type EnumRows } from '../../src/schema/build.js';
import type { SchemaCache } from '../../src/schema/model.js';
import type { Session } from '../../src/server/auth/session.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

export interface Fixture {
  db: Db;
  database: TestDatabase;
  config: Config;
  cache: SchemaCache;
  metadata: Metadata;
  rebuild(): Promise<SchemaCache>;
  ctx(role?: string, vars?: Record<string, string>, config?: Partial<Config>): ExecContext;
  close(): Promise<void>;
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

export function table(name: string, patch: Partial<TableMetadata> = {}, schema = 'public'): TableMetadata {
  return { ...emptyTable({ schema, name } as QualifiedTable), ...patch };
}

export async function fixture(setupSql: string, metadata: Metadata): Promise<Fixture> {
  const database = await createTestDatabase();
  const config: Config = { ...defaultConfig(), databaseUrl: database.url, usePreparedStatements: true };
  const db = await openDb({ databaseUrl: database.url, dataDir: '/tmp/unused', connections: 4, usePreparedStatements: true });
  if (setupSql) await db.query(setupSql);
  let version = 1;
  const f: Fixture = {
    db,
    database,
    config,
    metadata,
    cache: undefined as unknown as SchemaCache,
    async rebuild() {
      const intro = await introspect(db);
      const enumRows: EnumRows = new Map();
      for (const t of metadata.tables) {
        if (!t.is_enum) continue;
        const info = intro.tables.get(`${t.table.schema}.${t.table.name}`)!;
        const pk = info.primaryKey!.columns[0]!;
        const other = info.columns.find((c) => c.name !== pk)?.name;
        const r = await db.query(
          `select ${JSON.stringify(pk)} as value, ${other ? JSON.stringify(other) : 'null'} as comment from ${JSON.stringify(t.table.schema)}.${JSON.stringify(t.table.name)}`,
        );
        enumRows.set(`${t.table.schema}.${t.table.name}`, r.rows.map((x) => ({ value: x.value, comment: x.comment })));
      }
      f.cache = buildSchemaCache(metadata, intro, version++, enumRows);
      if (f.cache.inconsistent.length) throw new Error(`inconsistent metadata: ${JSON.stringify(f.cache.inconsistent)}`);
      return f.cache;
    },
    ctx(role = 'admin', vars = {}, cfg = {}) {
      const session: Session = { role, vars: { 'x-svc-role': role, ...vars }, hasAdminCredentials: role === 'admin' };
      return { cache: f.cache, db, config: { ...config, ...cfg }, session, log: quiet, headers: {} };
    },
    async close() {
      await db.close();
      await database.drop();
    },
  };
  await f.rebuild();
  return f;
}

export { emptyMetadata };
