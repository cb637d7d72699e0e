/**
 * Runs one /v1/query request: one transaction on one connection, the
 * metadata row locked, ops applied in order to a draft; commit persists the
 * draft (bumping resource_version, NOTIFY) and swaps the live cache.
 * Any error rolls everything back: `bulk` is all-or-nothing.
 */
import type { Span } from '../core/tracing.js';
import { BoundedRoleCache } from '../schema/roleCache.js';
import { loadSchemaCache } from '../schema/load.js';
import { syncEventTriggers } from '../events/triggers.js';
import { changeTriggerTables, syncChangeTriggers } from '../changes/tracker.js';
import { syncCronTriggers } from '../scheduled/triggers.js';
import { lockMetadata, loadMetadata, saveMetadata } from '../catalog/catalog.js';
import { SvcError, accessDenied } from '../errors.js';
import type { Engine } from '../engine.js';
import { isAdmin, type Session } from '../core/session.js';
import { deepClone, expectArray, expectObject, expectText, keyNotFound } from '../document/args.js';
import { jsonDeeperThan, withDoubles } from '../json.js';
import { newInconsistencyAfterChange } from '../schema/dependencies.js';
import { OPS, type AccessMode, type OpContext, type OpDef, type RequestState } from './registry.js';
import type { SchemaCache } from '../schema/model.js';
import type { InconsistentObject } from '../model/tables.js';
import './ops/index.js';

interface ParsedOp {
  type: string;
  def: OpDef;
  args: unknown;
  version: number;
  path: string;
}

/** the operations whose arguments keep exact numerals (JsonNumber): /v1/query's DML, and bulk */
const EXACT_NUMBERS: ReadonlySet<string> = new Set(['select', 'count', 'insert', 'update', 'delete', 'bulk']);

function parseRequest(body: unknown, path: string, session: Session): ParsedOp {
  const r = expectObject(body, path === '$' ? '$' : path, 'Object');
  if (!('type' in r)) throw keyNotFound('type', path);
  const type = expectText(r.type, `${path}.type`);
  const def = OPS.get(type);
  if (!def) {
    throw new SvcError(400, 'parse-failed', `unknown type ${JSON.stringify(type)}`, `${path}.type`);
  }
  const version = r.version === undefined ? 1 : r.version;
  if (version !== 1 && version !== 2) {
    throw new SvcError(400, 'parse-failed', `expected 1 or 2, encountered ${JSON.stringify(version)}`, `${path}.version`);
  }
  if (!('args' in r)) throw keyNotFound('args', path);
  const argsPath = `${path}.args`;
  if (def.adminOnly !== false && !isAdmin(session)) throw accessDenied('restricted access : admin only', argsPath);
  // numerals kept exact (JsonNumber) are for the DML operations (bigint and numeric values digit for
  // digit) and bulk (whose operations are read one by one, here); every other operation takes
  // numbers as before, doubles
  return { type, def, args: EXACT_NUMBERS.has(type) ? r.args : withDoubles(r.args), version: version as number, path: argsPath };
}

function flatten(body: unknown, session: Session): { ops: ParsedOp[]; bulk: boolean } {
  const top = parseRequest(body, '$', session);
  if (top.type !== 'bulk') return { ops: [top], bulk: false };
  const ops: ParsedOp[] = [];
  const walk = (args: unknown, path: string) => {
    expectArray(args, path).forEach((q, i) => {
      const p = parseRequest(q, `${path}[${i}]`, session);
      if (p.type === 'bulk') walk(p.args, p.path);
      else ops.push(p);
    });
  };
  walk(top.args, top.path);
  return { ops, bulk: true };
}

const key = (o: InconsistentObject) => JSON.stringify([o.type, o.definition]);

export async function runQueryRequest(
  engine: Engine,
  session: Session,
  body: unknown,
  headers: Record<string, string | string[] | undefined>,
  span?: Span,
): Promise<unknown> {
  if (jsonDeeperThan(body, engine.config.maxNestingDepth)) {
    throw new SvcError(400, 'parse-failed', `the request is nested deeper than ${engine.config.maxNestingDepth} levels`, '$');
  }
  const { ops, bulk } = flatten(body, session);
  // access mode: a read-only run_sql cannot share a transaction with writes
  const modes: AccessMode[] = ops.map((o) => o.def.accessMode?.(o.args) ?? 'write');
  const forced = modes.indexOf('read-only-forced');
  if (forced >= 0) {
    const w = modes.indexOf('write');
    if (w >= 0) {
      throw new SvcError(
        400,
        'bad-request',
        `incompatible access mode requirements in bulk query, expected access mode: READ WRITE but ${ops[forced]!.path.replace(/\.args$/, '')} forces READ ONLY`,
        '$',
      );
    }
  }
  const readOnly = modes.every((m) => m !== 'write');

  const base = engine.cache;
  // /v1/query may hold at most 3/4 of the pool: long run_sql calls cannot starve GraphQL requests
  const release = await engine.queryGate.acquire(engine.config.poolAcquireTimeout * 1000 || 2 ** 31 - 1);
  try {
    return await runInTransaction(engine, session, headers, ops, bulk, readOnly, base, span);
  } finally {
    release();
  }
}

async function runInTransaction(
  engine: Engine,
  session: Session,
  headers: Record<string, string | string[] | undefined>,
  ops: ReturnType<typeof flatten>['ops'],
  bulk: boolean,
  readOnly: boolean,
  base: SchemaCache,
  span: Span | undefined,
): Promise<unknown> {
  // tracing on: the statements are children of the request's span (when sampled: Db.withSpan)
  const db = span ? engine.db.withSpan(span) : engine.db;
  let ownVersion: (() => void) | undefined;
  let result;
  try {
    result = await db.tx(
      async (conn) => {
        // admin requests (run_sql, metadata) have their own bound (--admin-statement-timeout)
        if (isAdmin(session) && engine.db.kind === 'pg' && engine.config.adminStatementTimeout * 1000 !== engine.config.statementTimeout * 1000) {
          await conn.query(`set local statement_timeout = ${Math.floor(engine.config.adminStatementTimeout * 1000)}`);
        }
        let storedVersion = base.resourceVersion;
        let cache: SchemaCache = base;
        const lock = !readOnly && ops.some((o) => (o.def.locksMetadata ? o.def.locksMetadata(o.args) : o.def.kind === 'metadata' || o.def.adminOnly !== false));
        if (lock) {
          storedVersion = await lockMetadata(conn);
          if (storedVersion !== base.resourceVersion) {
            // another instance changed the metadata: start from what is stored
            const stored = await loadMetadata(conn);
            cache = await loadSchemaCache(conn, stored.metadata, stored.resourceVersion, undefined, base.extensions, engine.config.roleSchemaCacheMaxBytes);
          }
        }
        const state: RequestState = { metadata: deepClone(cache.metadata), cache, metadataChanged: false, dbChanged: false };
        const results: unknown[] = [];
        for (const op of ops) {
          const ctx: OpContext = {
            db,
            conn,
            span,
            config: engine.config,
            log: engine.log,
            session,
            headers,
            state,
            path: op.path,
            outbound: engine.outbound,
            remotes: engine.remotes,
            rebuild: async (opts = {}) => {
              const fresh = await loadSchemaCache(
                conn,
                state.metadata,
                state.cache.resourceVersion,
                opts.db ?? (opts.introspect ? undefined : state.cache.db),
                state.cache.extensions,
                engine.config.roleSchemaCacheMaxBytes,
              );
              state.cache = fresh;
              return fresh;
            },
          };
          const before = state.cache.inconsistent;
          const checked = op.def.kind === 'metadata' && op.type !== 'replace_metadata' && op.type !== 'reload_metadata';
          const mdBefore = checked ? JSON.stringify(state.metadata) : '';
          const r = await op.def.run(ctx, op.args, op.version);
          if (checked) {
            state.metadataChanged = true;
            const after = await ctx.rebuild();
            const known = new Set(before.map(key));
            const fresh = after.inconsistent.filter((o) => !known.has(key(o)));
            if (fresh.length) throw newInconsistencyAfterChange(fresh, JSON.parse(mdBefore), state.metadata, op.path);
          }
          results.push(r);
        }
        let next: SchemaCache | undefined;
        let generated = 0;
        if (state.metadataChanged || state.dbChanged) {
          // run_sql may change what the metadata is built on even when the
          // document is unchanged: bump the version so every instance rebuilds
          await syncEventTriggers(conn, cache.metadata, state.metadata, (t) => state.cache.db.tables.has(`${t.schema}.${t.name}`));
          // the table-change triggers (changes/tracker.ts): one that cannot be installed leaves its table polled
          const changes = await syncChangeTriggers(
            conn,
            engine.config.tableChangeTriggers ? changeTriggerTables(state.metadata.tables, (k) => state.cache.db.tables.get(k)?.kind) : [],
          );
          for (const f of changes.failed)
            engine.log.warn(
              { type: 'table-changes', detail: { table: f.table, error: f.error } },
              `no change trigger on ${f.table.schema}.${f.table.name}: its live queries poll`,
            );
          generated = await syncCronTriggers(conn, cache.metadata, state.metadata, engine.clock());
          const version = await saveMetadata(conn, state.metadata);
          ownVersion?.(); // a retried transaction: the earlier attempt's version was never committed
          ownVersion = engine.committingVersion(version);
          next = { ...state.cache, resourceVersion: version, perRole: new BoundedRoleCache(engine.config.roleSchemaCacheMaxBytes) };
        }
        return { results, next, queued: state.queuedDeliveries === true, generated };
      },
      { readOnly },
    );
  } catch (e) {
    ownVersion?.();
    throw e;
  }
  if (result.next) engine.swapCache(result.next);
  ownVersion?.();
  // --workers: the other workers run the new version before this request answers
  if (result.next && engine.versionBarrier) await engine.versionBarrier(result.next.resourceVersion);
  if (result.queued) engine.pokeDeliveries();
  if (result.generated && engine.cronGenerator) engine.cronGenerator.stats.generated += result.generated;
  return bulk ? result.results : result.results[0];
}
