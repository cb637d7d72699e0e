/**
 * Table changes: which tracked tables may have changed, as a per-table version counter per
 * engine, for whatever keeps results derived from tables (change-driven live queries, a response
 * cache).
 *
 * The signal: every tracked table (an ordinary or partitioned table) carries one statement-level
 * trigger, `svc_table_changes`, AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE … FOR EACH STATEMENT,
 * calling `svc_catalog.svc_table_changed()`, which runs `pg_notify('svc_table_changes',
 * '["<schema>", "<table>"]')`. PostgreSQL folds identical notifications of one transaction into
 * one, so a transaction sends ONE notification per table it wrote, whatever its number of
 * statements or rows; nothing is written (no counter row: writers are not serialized). Writes
 * from anywhere fire it (GraphQL, run_sql, psql, other services), and so does a statement that
 * touched no row (an UPDATE … WHERE false): "may have changed".
 *
 * The triggers are kept in step with the metadata like event triggers (events/triggers.ts): at the
 * commit of every metadata change or run_sql (metadata/run.ts: tables tracked, untracked, created,
 * dropped, renamed — a trigger follows its table through a rename) and at start-up
 * (Engine.repairEventTriggers). A table whose trigger cannot be installed (not its owner, a
 * read-only database) is logged and left unwatched: readers of it fall back to polling.
 *
 * The engine LISTENs on the pool's one LISTEN connection (db.ts, shared with metadata sync) and
 * counts per table. Guarantees (`version`, `subscribe`):
 * - a notification is delivered only after its transaction committed and is visible, in commit
 *   order; the version is bumped (and subscribers called, coalesced per event-loop turn) when this
 *   process receives it, so any statement started on the PRIMARY after a subscriber was called
 *   sees the write. Between the commit and its receipt (typically a millisecond or two on one
 *   host) the version is still the old one: compare versions, never assume "no bump = no write"
 *   for a write you have just committed yourself on another connection;
 * - a read replica may not have replayed the write yet when the notification arrives (see
 *   `primaryLsn`): readers on a replica must wait for it or read the primary;
 * - while the LISTEN connection is down `listening()` is false and every table must be taken as
 *   changing (poll); when it comes back every table counts as changed once (`version` of every
 *   table goes up, subscribers get 'all'), since notifications sent meanwhile are lost;
 * - after every schema-cache change the tracker re-reads which tables carry the trigger and what
 *   views and functions read (`tablesRead`, changes/reads.ts), then counts every table as changed
 *   once ('all'): a metadata change is rare and may change what any reader reads;
 * - `watched(t)`: t's trigger is installed (checked on every schema-cache change); an unwatched
 *   table gives no signal and its readers must poll. A trigger dropped outside Svc (or a table
 *   dropped and created again by psql) is noticed, like every DDL made outside Svc, at the next
 *   metadata change or reload_metadata, which also re-installs it (no periodic catalog query:
 *   an idle engine sends no statement).
 * Mode `poll` (no signal at all: LISTEN failed, or triggers cannot be installed anywhere) makes
 * every reader poll. The embedded PGlite runs triggers and NOTIFY in-process: mode `notify`.
 */
import type { Db, Queryable } from '../db/db.js';
import type { Logger } from '../core/logger.js';
import type { QualifiedTable } from '../model/metadata.js';
import { qualified, quoteLiteral } from '../sql/ident.js';
import { loadReadCatalog, ReadResolver } from './reads.js';

export const CHANGES_CHANNEL = 'svc_table_changes';
export const CHANGE_TRIGGER = 'svc_table_changes';
const FUNCTION = 'svc_catalog.svc_table_changed';

/** The key of a table in the tracker: `schema.name`, as the schema cache's maps. */
export const tableKey = (t: QualifiedTable): string => `${t.schema}.${t.name}`;

/** The tables a change touched, or every table (the signal was lost for a while). */
export type ChangedTables = ReadonlySet<string> | 'all';

// A partition's trigger names its tracked ancestors (pairs of schema, name in its arguments): a
// statement that targets a partition directly fires only that partition's statement-level
// triggers, never its parents', and the parents' readers must hear of it. Every trigger also
// names its own table.
const FUNCTION_SQL = `CREATE OR REPLACE FUNCTION ${FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $svc$
BEGIN
  PERFORM pg_notify(${quoteLiteral(CHANGES_CHANNEL)}, json_build_array(TG_TABLE_SCHEMA, TG_TABLE_NAME)::text);
  FOR i IN 0 .. (TG_NARGS / 2) - 1 LOOP
    PERFORM pg_notify(${quoteLiteral(CHANGES_CHANNEL)}, json_build_array(TG_ARGV[2 * i], TG_ARGV[2 * i + 1])::text);
  END LOOP;
  RETURN NULL;
END $svc$`;

/** A table that carries (or should carry) the trigger; `roots`: a partition's tracked ancestors, named in its notifications. */
export interface ChangeTriggerTarget extends QualifiedTable {
  roots?: QualifiedTable[];
}

const INSTALLED = `
select n.nspname as schema, c.relname as name, t.tgnargs as nargs, encode(t.tgargs, 'hex') as args
from pg_trigger t
join pg_class c on c.oid = t.tgrelid
join pg_namespace n on n.oid = c.relnamespace
where t.tgname = ${quoteLiteral(CHANGE_TRIGGER)} and t.tgfoid = to_regprocedure(${quoteLiteral(`${FUNCTION}()`)})`;

/** Every partition (at any depth, partitioned ones included) of the partitioned tables among `roots`. */
const PARTITIONS = `
select r.schema as root_schema, r.name as root_name, n.nspname as schema, c.relname as name
from json_to_recordset($1::json) as r(schema text, name text)
cross join lateral pg_partition_tree(format('%I.%I', r.schema, r.name)::regclass) p
join pg_class c on c.oid = p.relid
join pg_namespace n on n.oid = c.relnamespace
where p.level > 0 and c.relkind in ('r', 'p')`;

const createTrigger = (t: ChangeTriggerTarget) =>
  `CREATE TRIGGER ${CHANGE_TRIGGER} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${qualified(t)} FOR EACH STATEMENT EXECUTE PROCEDURE ${FUNCTION}(${(
    t.roots ?? []
  )
    .map((r) => `${quoteLiteral(r.schema)}, ${quoteLiteral(r.name)}`)
    .join(', ')})`;

/** key of a trigger target: the table and the ancestors it signals */
const targetKey = (t: ChangeTriggerTarget): string => [tableKey(t), ...(t.roots ?? []).map(tableKey).sort()].join('>');

/** The tables that carry the change trigger now (a partition's with the ancestors it signals). */
export async function installedChangeTriggers(db: Queryable): Promise<ChangeTriggerTarget[]> {
  const r = await db.query(INSTALLED);
  return (r.rows as Array<{ schema: string; name: string; nargs: number; args: string }>).map((x) => {
    // tgargs: the arguments, each ended by a NUL byte
    const args = Number(x.nargs) > 0 ? Buffer.from(x.args, 'hex').toString('utf8').split('\0').slice(0, Number(x.nargs)) : [];
    const roots: QualifiedTable[] = [];
    for (let i = 0; i + 1 < args.length; i += 2) roots.push({ schema: args[i]!, name: args[i + 1]! });
    return roots.length ? { schema: x.schema, name: x.name, roots } : { schema: x.schema, name: x.name };
  });
}

/**
 * Makes the change triggers be on exactly `wanted` (ordinary and partitioned tables only), inside
 * the caller's transaction. Each change runs under a savepoint: a table whose trigger cannot be
 * installed (permissions, a read-only database) is reported in `failed` and the transaction goes
 * on (its readers poll). Cheap when nothing changes: one catalog query.
 */
export async function syncChangeTriggers(
  conn: Queryable,
  wanted: readonly QualifiedTable[],
): Promise<{ installed: number; dropped: number; failed: Array<{ table: QualifiedTable; error: string }> }> {
  const want = new Map<string, ChangeTriggerTarget>(wanted.map((t) => [tableKey(t), { schema: t.schema, name: t.name }]));
  // partitions of partitioned tables signal their tracked ancestors too
  if (wanted.length) {
    const parts = await conn.query(PARTITIONS, [JSON.stringify(wanted.map((t) => ({ schema: t.schema, name: t.name })))]);
    for (const p of parts.rows as Array<{ root_schema: string; root_name: string; schema: string; name: string }>) {
      const t = want.get(tableKey(p)) ?? { schema: p.schema, name: p.name };
      t.roots = [...(t.roots ?? []), { schema: p.root_schema, name: p.root_name }];
      want.set(tableKey(p), t);
    }
  }
  const wantByKey = new Map([...want.values()].map((t) => [targetKey(t), t]));
  const have = new Map((await installedChangeTriggers(conn)).map((t) => [targetKey(t), t]));
  const drop = [...have].filter(([k]) => !wantByKey.has(k)).map(([, t]) => t);
  const add = [...wantByKey].filter(([k]) => !have.has(k)).map(([, t]) => t);
  const out = { installed: 0, dropped: 0, failed: [] as Array<{ table: QualifiedTable; error: string }> };
  if (!drop.length && !add.length) return out;
  const guarded = async (t: ChangeTriggerTarget, sql: string[]): Promise<boolean> => {
    await conn.query('savepoint svc_table_changes');
    try {
      for (const s of sql) await conn.query(s);
      await conn.query('release savepoint svc_table_changes');
      return true;
    } catch (e) {
      await conn.query('rollback to savepoint svc_table_changes');
      await conn.query('release savepoint svc_table_changes');
      out.failed.push({ table: { schema: t.schema, name: t.name }, error: e instanceof Error ? e.message : String(e) });
      return false;
    }
  };
  for (const t of drop) if (await guarded(t, [`DROP TRIGGER IF EXISTS ${CHANGE_TRIGGER} ON ${qualified(t)}`])) out.dropped++;
  let fnReady = false;
  for (const t of add) {
    const sql = fnReady ? [createTrigger(t)] : [FUNCTION_SQL, createTrigger(t)];
    if (await guarded(t, sql)) {
      out.installed++;
      fnReady = true;
    }
  }
  return out;
}

/** The tables of `metadata` that can carry a change trigger: tracked, existing, ordinary or partitioned. */
export function changeTriggerTables(tables: ReadonlyArray<{ table: QualifiedTable }>, kindOf: (key: string) => string | undefined): QualifiedTable[] {
  return tables
    .map((t) => t.table)
    .filter((t) => {
      const k = kindOf(tableKey(t));
      return k === 'r' || k === 'p';
    });
}

export interface ChangeStats {
  /** notifications received */
  notifications: number;
  /** times the LISTEN connection came back (every table counted as changed) */
  reconnects: number;
}

/**
 * The per-engine change tracker: LISTENs, keeps a version per table, tells subscribers. See the
 * module comment for the guarantees.
 */
export class ChangeTracker {
  private readonly versions = new Map<string, number>();
  /** bumped when every table counts as changed (the LISTEN connection came back) */
  private epoch = 0;
  private watchedTables = new Set<string>();
  private readonly subs = new Set<(tables: ChangedTables) => void>();
  private pending: Set<string> | 'all' | undefined;
  private up = false;
  private started = false;
  private unlisten?: () => Promise<void>;
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private resolver: ReadResolver | undefined;
  /** bumped by every refresh: read sets computed before it may be out of date */
  catalogVersion = 0;
  /** 'notify': change notifications arrive; 'poll': no signal (readers poll) */
  mode: 'notify' | 'poll' = 'poll';
  readonly stats: ChangeStats = { notifications: 0, reconnects: 0 };

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /** Starts listening; on failure the mode stays 'poll' (logged, not fatal). */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    try {
      this.unlisten = await this.db.listen(
        CHANGES_CHANNEL,
        (payload) => this.onPayload(payload),
        () => {
          this.up = true;
          this.stats.reconnects++;
          this.changedAll();
        },
        () => {
          this.up = false;
          this.changedAll();
        },
      );
      this.up = true;
      this.mode = 'notify';
    } catch (e) {
      this.mode = 'poll';
      this.log.warn(
        { type: 'table-changes', detail: { error: e instanceof Error ? e.message : String(e) } },
        'cannot LISTEN for table changes: live queries poll',
      );
      return;
    }
    await this.refresh().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.started = false;
    this.up = false;
    this.mode = 'poll';
    const u = this.unlisten;
    this.unlisten = undefined;
    if (u) await u();
  }

  /** The LISTEN connection is up (notifications are being received). */
  listening(): boolean {
    return this.mode === 'notify' && this.up;
  }

  /** Whether `t` gives a change signal now (its trigger is installed and we are listening). */
  watched(t: QualifiedTable | string): boolean {
    return this.listening() && this.watchedTables.has(typeof t === 'string' ? t : tableKey(t));
  }

  /** The version of `t`: goes up whenever `t` may have changed (never down). */
  version(t: QualifiedTable | string): number {
    return this.epoch + (this.versions.get(typeof t === 'string' ? t : tableKey(t)) ?? 0);
  }

  /**
   * The tables (`schema.name`) a compiled statement reads (changes/reads.ts), or null when that
   * cannot be known (a function with dynamic SQL, a materialized view, no catalog read yet).
   */
  tablesRead(sql: string): string[] | null {
    return this.resolver ? this.resolver.tablesOf(sql) : null;
  }

  /** Called with the tables that may have changed (coalesced per event-loop turn); returns an unsubscribe function. */
  subscribe(fn: (tables: ChangedTables) => void): () => void {
    this.subs.add(fn);
    return () => this.subs.delete(fn);
  }

  /**
   * Re-reads which tables carry the trigger and what views and functions read (after a
   * schema-cache change); then every table counts as changed once.
   */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        const now = new Set((await installedChangeTriggers(this.db)).map(tableKey));
        this.resolver = new ReadResolver(await loadReadCatalog(this.db));
        this.watchedTables = now;
        this.catalogVersion++;
      } while (this.refreshAgain);
      // views and functions may read other tables now, triggers may have come or gone: readers
      // work out what they read again, and take everything as changed once
      this.changedAll();
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private onPayload(payload: string): void {
    this.stats.notifications++;
    let key: string;
    try {
      const [schema, name] = JSON.parse(payload) as [string, string];
      key = `${schema}.${name}`;
    } catch {
      this.changedAll(); // not ours: take no chances
      return;
    }
    this.changed(key);
  }

  private changed(key: string): void {
    this.versions.set(key, (this.versions.get(key) ?? 0) + 1);
    if (this.pending === 'all') return;
    if (!this.pending) {
      this.pending = new Set();
      setImmediate(() => this.flush());
    }
    this.pending.add(key);
  }

  private changedAll(): void {
    this.epoch++;
    if (!this.pending) setImmediate(() => this.flush());
    this.pending = 'all';
  }

  private flush(): void {
    const p = this.pending;
    this.pending = undefined;
    if (!p) return;
    for (const fn of this.subs) {
      try {
        fn(p);
      } catch (e) {
        this.log.error({ type: 'table-changes', detail: { error: e instanceof Error ? e.message : String(e) } }, 'a table-change subscriber failed');
      }
    }
  }
}
