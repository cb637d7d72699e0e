/**
 * The response cache of `@cached` queries (issue 37 item 3): keys, the two stores, the change
 * signal that invalidates entries, counters for /v1/metrics.
 *
 * Key: SHA-256 of the database, the metadata version, the role, the schema variant (Relay,
 * backend-only, stringified numerics), the operation name, the normalised query (all fixed per
 * plan: `CachePolicy.base`, hashed once), the variables, and the values of the session variables
 * the statement reads — those the role's permissions on the fields asked for read (two users whose
 * filters read x-svc-user-id never share an entry; a role whose permissions read no session
 * variable shares one entry among all its users).
 *
 * Correctness under writes: see store.ts. The guarantee (README "Response cache"): a hit is
 * never served for a result computed before a write to a table it read whose change notification
 * (the table's statement-level trigger's NOTIFY) had reached some Svc process before the lookup
 * — with Redis any process sharing it, in memory this process; a write by this process's own
 * mutations counts from before the mutation's response is sent.
 */
import type { SharedStore } from '../db/redis.js';
import type { Logger } from '../core/logger.js';
import { MemoryStore, RedisStore, newStats, type CacheStats, type Hit } from './store.js';
import { sha256Hex as sha256 } from '../core/hash.js';
import type { NotifyFence } from './fence.js';
import { jsonText } from '../json.js';

/**
 * The table-change signal the cache needs (src/changes, statement-level triggers + LISTEN/NOTIFY):
 * a per-table counter bumped when a write to the table is announced, a subscription to those
 * announcements, and whether the announcements are being heard at all.
 */
export interface TableChanges {
  /** the counter of `schema.table` (monotonic; bumped for each announced write) */
  version(table: string): number;
  /** called with the tables of each announcement; 'all' after a gap (reconnect) */
  subscribe(fn: (tables: Iterable<string> | 'all') => void): () => void;
  /** false while writes could go unheard (no LISTEN connection, or not set up yet) */
  listening(): boolean;
  /** whether the table gives a change signal (its trigger is installed and we are listening) */
  watched(table: string): boolean;
  /** the base tables a compiled statement reads (through views and SQL/plpgsql functions); null = unknown */
  tablesRead(sql: string): string[] | null;
  /** goes up whenever `tablesRead` may answer differently (the catalog was re-read) */
  readonly catalogVersion: number;
}

export interface ResponseCacheOptions {
  maxBytes: number;
  shared?: SharedStore;
  changes?: TableChanges;
  /** identifies the database (entries of different databases never mix in one Redis) */
  dbId: string;
  log: Logger;
  /** strict mode (--query-cache-strict): a fence before every lookup */
  fence?: NotifyFence;
}

export class ResponseCache {
  readonly stats: CacheStats = newStats();
  readonly memory?: MemoryStore;
  readonly redis?: RedisStore;
  private readonly own = new Map<string, number>();
  /** bumped when every entry of this process must go ('all': the change signal had a gap) */
  private gen = 0;
  private unsubscribe?: () => void;
  /** Redis: this process's announcements in flight (strict mode waits for them) */
  private announcing: Promise<unknown> = Promise.resolve();
  /**
   * its own mutations announce their writes: in memory once this process has seen a @cached query
   * (before, it holds no entry); with Redis always (other processes' entries are shared)
   */
  private isActive = false;

  constructor(private readonly opts: ResponseCacheOptions) {
    if (opts.shared) {
      this.redis = new RedisStore(opts.shared, opts.dbId, this.stats, Math.max(1, opts.maxBytes));
      this.isActive = true;
    } else this.memory = new MemoryStore(opts.maxBytes, this.stats);
    this.unsubscribe = opts.changes?.subscribe((tables) => this.changed(tables));
  }

  /** this process's mutations announce their writes (see isActive) */
  get active(): boolean {
    return this.isActive;
  }

  get dbId(): string {
    return this.opts.dbId;
  }

  /** false: answer @cached queries without the cache (the change signal is not heard) */
  available(): boolean {
    const c = this.opts.changes;
    return !!c && c.listening();
  }

  /** The base tables a statement reads (null: unknown) and the catalog version of that answer. */
  tablesRead(sql: string): { tables: string[] | null; catalog: number } {
    const c = this.opts.changes;
    if (!c) return { tables: null, catalog: -1 };
    return { tables: c.tablesRead(sql), catalog: c.catalogVersion };
  }

  /** the catalog version `tablesRead` answers for now */
  get catalogVersion(): number {
    return this.opts.changes?.catalogVersion ?? -1;
  }

  /** every table gives a change signal: an entry reading them may be stored */
  watched(tables: readonly string[]): boolean {
    const c = this.opts.changes;
    return !!c && tables.every((t) => c.watched(t));
  }

  /** The request's key: its plan's base, its variables and the session variables it reads. */
  key(base: string, variables: Record<string, unknown>, sessionVars: readonly string[] | null, session: Record<string, string>): string {
    let s = base;
    s += '\u0000';
    s += jsonText(variables);
    if (sessionVars === null) {
      for (const k of Object.keys(session).sort()) s += `\u0000${k}=${session[k]}`;
    } else {
      for (const k of sessionVars) {
        const v = session[k];
        s += v === undefined ? '\u0000-' : `\u0000=${v}`;
      }
    }
    // the digest of a key seen lately (a hit's hash is ~5 % of its cost); bounded in count and size
    if (s.length > 1024) return sha256(s);
    let h = this.digests.get(s);
    if (h === undefined) {
      if (this.digests.size >= 4096) this.digests.clear();
      this.digests.set(s, (h = sha256(s)));
    }
    return h;
  }
  /** key text → its SHA-256 (see key) */
  private readonly digests = new Map<string, string>();

  private versions(tables: readonly string[]): number[] {
    const c = this.opts.changes!;
    return tables.map((t) => c.version(t) + (this.own.get(t) ?? 0) + this.gen);
  }

  /** The entry for a key whose tables are still unchanged. */
  get(key: string, tables: readonly string[]): Hit | undefined | Promise<Hit | undefined> {
    this.isActive = true;
    if (this.memory) return this.memory.get(key, (ts) => this.versions(ts), Date.now());
    return this.redis!.get(key, tables);
  }

  /** The tables' versions now (before the statement runs). Undefined: do not store (Redis failed). */
  capture(tables: readonly string[]): number[] | Promise<string | undefined> {
    this.isActive = true;
    if (this.memory) return this.versions(tables);
    return this.redis!.capture(tables);
  }

  set(key: string, body: string, ttlSeconds: number, tables: readonly string[], versions: number[] | string): void | Promise<void> {
    if (this.memory) return this.memory.set(key, body, ttlSeconds * 1000, tables, versions as number[], Date.now());
    return this.redis!.set(key, body, ttlSeconds * 1000, versions as string);
  }

  /**
   * This process's mutation committed writes to these tables: entries that read them stop being
   * served now, before its response (the NOTIFY will say the same a little later).
   */
  wrote(tables: readonly string[]): void | Promise<void> {
    if (!this.isActive || tables.length === 0) return;
    if (this.memory) {
      for (const t of tables) {
        this.own.set(t, (this.own.get(t) ?? 0) + 1);
        this.memory.invalidate(t);
      }
      return;
    }
    return this.redis!.bump(tables);
  }

  private changed(tables: Iterable<string> | 'all'): void {
    if (this.memory) {
      if (tables === 'all') {
        this.gen++;
        this.stats.invalidations += this.memory.size;
        this.memory.clear();
      } else for (const t of tables) this.memory.invalidate(t);
      return;
    }
    const p = this.redis!.bump(tables === 'all' ? 'all' : [...tables]);
    this.announcing = Promise.all([this.announcing, p]);
  }

  /** strict mode is on: `beforeLookup` must be awaited before each lookup */
  get strict(): boolean {
    return !!this.opts.fence;
  }

  /**
   * Strict mode: resolves once every write committed before this call has been counted (its
   * notification received through the fence; with Redis, announced there too). Rejects when the
   * fence fails (the caller misses).
   */
  async beforeLookup(): Promise<void> {
    await this.opts.fence!.wait();
    if (this.redis) {
      // the tracker tells its subscribers on the next turn; then this process's announcements land
      await new Promise((r) => setImmediate(r));
      await this.announcing;
    }
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }
}
