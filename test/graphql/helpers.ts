/**
 * A scratch database with a schema cache built from SQL + metadata (by the engine's own loader,
 * src/schema/load.ts), and an ExecContext to call the executor directly (no HTTP server) with the
 * fixture's own plan cache.
 */
import { defaultConfig, type Config } from '../../src/config/config.js';
import { openDb, type Db } from '../../src/db/db.js';
import type { ExecContext } from '../../src/execute/interface.js';
import { PlanCache } from '../../src/execute/planCache.js';
import { emptyMetadata, emptyTable, type Metadata, type QualifiedTable, type TableMetadata } from '../../src/model/metadata.js';
import { loadSchemaCache } from '../../src/schema/load.js';
import { EXTENSION_EXECUTORS, schemaExtensions } from '../../src/extensions.js';
import { OutboundClient } from '../../src/http/client.js';
import { RemoteStore } from '../../src/remote/introspect.js';
import type { SchemaCache } from '../../src/schema/model.js';
import type { Session } from '../../src/server/auth/session.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

export interface Fixture {
  db: Db;
  database: TestDatabase;
  config: Config;
  cache: SchemaCache;
  metadata: Metadata;
  /** the plan cache of the fixture's contexts */
  planCache: PlanCache;
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
  // the fixture's own outbound client and remote store, as an engine has (src/engine.ts)
  const outbound = new OutboundClient();
  const extensions = schemaExtensions(new RemoteStore(outbound));
  const f: Fixture = {
    db,
    database,
    config,
    metadata,
    planCache: new PlanCache(),
    cache: undefined as unknown as SchemaCache,
    async rebuild() {
      f.cache = await loadSchemaCache(db, metadata, version++, undefined, extensions);
      if (f.cache.inconsistent.length) throw new Error(`inconsistent metadata: ${JSON.stringify(f.cache.inconsistent)}`);
      return f.cache;
    },
    ctx(role = 'admin', vars = {}, cfg = {}) {
      const session: Session = { role, vars: { 'x-svc-role': role, ...vars }, hasAdminCredentials: role === 'admin' };
      return {
        cache: f.cache,
        db,
        config: { ...config, ...cfg },
        session,
        log: quiet,
        headers: {},
        planCache: f.planCache,
        outbound,
        executors: EXTENSION_EXECUTORS,
      };
    },
    async close() {
      outbound.close();
      await db.close();
      await database.drop();
    },
  };
  await f.rebuild();
  return f;
}

export { emptyMetadata };
