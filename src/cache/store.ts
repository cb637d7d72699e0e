/**
 * Where cached responses live: this process's memory (LRU, bounded by bytes) or Redis (shared by
 * every worker and instance on the same database).
 *
 * Each entry keeps the versions of the tables it read, captured before its statement ran, and is
 * served only while they are all unchanged:
 * - memory: a table's version is the change tracker's counter (bumped when the table's change
 *   NOTIFY arrives) plus this process's own-write counter (bumped when one of its mutations
 *   commits, before the mutation's response is sent);
 * - Redis: a table's version is a token in Redis (`<prefix>qc:<db>:v:<table>`), replaced by a new
 *   unique token by every process that hears the table's change NOTIFY (or commits a mutation to
 *   it), plus one generation token (`…:gen`) replaced when a process may have missed changes (its
 *   LISTEN connection dropped, or Redis was unreachable when it had a change to announce). A
 *   missing token is created (SET NX) when an entry is computed and never matches an entry
 *   computed before it was lost, so an evicted or flushed token can only cause misses.
 *   Checking the tokens and reading the entry is one Lua script: one round trip per hit.
 */
import { randomUUID } from 'node:crypto';
import type { SharedStore } from '../db/redis.js';

export interface Hit {
  body: string;
  /** ms the entry has left */
  remainingMs: number;
}

export interface CacheStats {
  hits: number;
  misses: number;
  /** entries dropped to stay within the byte budget */
  evictions: number;
  /** entries dropped (or refused on a lookup) because a table they read was written */
  invalidations: number;
  /** requests with @cached answered without the cache (see CachePolicy.bypass; Redis unreachable) */
  bypasses: number;
  /** Redis commands that failed (each answered as a miss) */
  redisErrors: number;
}

export const newStats = (): CacheStats => ({ hits: 0, misses: 0, evictions: 0, invalidations: 0, bypasses: 0, redisErrors: 0 });

interface MemEntry {
  body: string;
  expires: number;
  tables: readonly string[];
  versions: readonly number[];
  bytes: number;
}

/** bytes an entry costs beyond its body and key */
const ENTRY_OVERHEAD = 256;

export class MemoryStore {
  private readonly entries = new Map<string, MemEntry>();
  private readonly byTable = new Map<string, Set<string>>();
  private used = 0;
  constructor(
    readonly maxBytes: number,
    private readonly stats: CacheStats,
  ) {}

  get(key: string, current: (tables: readonly string[]) => readonly number[], now: number): Hit | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires <= now) {
      this.drop(key, e);
      return undefined;
    }
    const cur = current(e.tables);
    for (let i = 0; i < cur.length; i++) {
      if (cur[i] !== e.versions[i]) {
        this.drop(key, e);
        this.stats.invalidations++;
        return undefined;
      }
    }
    // most recently used last
    this.entries.delete(key);
    this.entries.set(key, e);
    return { body: e.body, remainingMs: e.expires - now };
  }

  set(key: string, body: string, ttlMs: number, tables: readonly string[], versions: readonly number[], now: number): void {
    const bytes = ENTRY_OVERHEAD + key.length + body.length * 2 + tables.reduce((n, t) => n + t.length * 2 + 16, 0);
    const old = this.entries.get(key);
    if (old) this.drop(key, old);
    if (bytes > this.maxBytes || ttlMs <= 0) return;
    while (this.used + bytes > this.maxBytes) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.drop(oldest.value, this.entries.get(oldest.value)!);
      this.stats.evictions++;
    }
    this.entries.set(key, { body, expires: now + ttlMs, tables, versions, bytes });
    this.used += bytes;
    for (const t of tables) {
      let s = this.byTable.get(t);
      if (!s) this.byTable.set(t, (s = new Set()));
      s.add(key);
    }
  }

  /** Drops the entries that read a table (it was written). */
  invalidate(table: string): void {
    const keys = this.byTable.get(table);
    if (!keys) return;
    for (const k of [...keys]) {
      const e = this.entries.get(k);
      if (e) {
        this.drop(k, e);
        this.stats.invalidations++;
      }
    }
  }

  clear(): void {
    this.entries.clear();
    this.byTable.clear();
    this.used = 0;
  }

  private drop(key: string, e: MemEntry): void {
    this.entries.delete(key);
    this.used -= e.bytes;
    for (const t of e.tables) {
      const s = this.byTable.get(t);
      if (s) {
        s.delete(key);
        if (s.size === 0) this.byTable.delete(t);
      }
    }
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.used;
  }
}

/** KEYS: the entry, then the version keys (generation first); reply: false, {0} (stale: dropped) or {1, pttl, body} */
const GET_SCRIPT = `
local e = redis.call('GET', KEYS[1])
if not e then return false end
local nl = string.find(e, '\\n', 1, true)
local cur = {}
for i = 2, #KEYS do cur[i - 1] = redis.call('GET', KEYS[i]) or '' end
if table.concat(cur, ',') ~= string.sub(e, 1, nl - 1) then
  redis.call('DEL', KEYS[1])
  return {0}
end
return {1, redis.call('PTTL', KEYS[1]), string.sub(e, nl + 1)}
`;

/** KEYS: the version keys; ARGV[1]: a unique token prefix. A missing token is created. Reply: the tokens joined by ','. */
const CAPTURE_SCRIPT = `
local out = {}
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], ARGV[1] .. ':' .. i, 'NX')
  out[i] = redis.call('GET', KEYS[i])
end
return table.concat(out, ',')
`;

export class RedisStore {
  private readonly sha = new Map<string, string>();
  private readonly ns: string;
  private seq = 0;
  private readonly me = randomUUID().slice(0, 12);
  /** a change could not be announced (Redis unreachable): the generation is replaced before the next hit */
  private owesGeneration = false;

  constructor(
    private readonly shared: SharedStore,
    dbId: string,
    private readonly stats: CacheStats,
    readonly maxEntryBytes: number,
  ) {
    this.ns = `${shared.prefix}qc:${dbId}:`;
  }

  private versionKeys(tables: readonly string[]): string[] {
    return [`${this.ns}gen`, ...tables.map((t) => `${this.ns}v:${t}`)];
  }

  private token(): string {
    return `${this.me}.${(++this.seq).toString(36)}`;
  }

  /** runs a script by its SHA, loading it when Redis does not know it */
  private async run(script: string, keys: string[], args: string[] = []): Promise<unknown> {
    const c = this.shared.client;
    let sha = this.sha.get(script);
    if (!sha) {
      sha = await c.scriptLoad(script);
      this.sha.set(script, sha);
    }
    try {
      return await c.evalSha(sha, { keys, arguments: args });
    } catch (e) {
      if (!(e instanceof Error) || !e.message.includes('NOSCRIPT')) throw e;
      this.sha.delete(script);
      return c.eval(script, { keys, arguments: args });
    }
  }

  private async settle(): Promise<boolean> {
    if (!this.owesGeneration) return true;
    await this.shared.client.set(`${this.ns}gen`, this.token());
    this.owesGeneration = false;
    return true;
  }

  /** the entry if its tokens are current; undefined on a miss or when Redis fails (counted) */
  async get(key: string, tables: readonly string[]): Promise<Hit | undefined> {
    if (!this.shared.ready()) return this.failed();
    try {
      await this.settle();
      const r = (await this.run(GET_SCRIPT, [`${this.ns}e:${key}`, ...this.versionKeys(tables)])) as null | [number, number?, string?];
      if (!r) return undefined;
      if (r[0] === 0) {
        this.stats.invalidations++;
        return undefined;
      }
      return { body: String(r[2]), remainingMs: Math.max(0, Number(r[1])) };
    } catch {
      return this.failed();
    }
  }

  /** the current tokens of the tables (created when missing); undefined when Redis fails */
  async capture(tables: readonly string[]): Promise<string | undefined> {
    if (!this.shared.ready()) return this.failed();
    try {
      await this.settle();
      return String(await this.run(CAPTURE_SCRIPT, this.versionKeys(tables), [this.token()]));
    } catch {
      return this.failed();
    }
  }

  async set(key: string, body: string, ttlMs: number, tokens: string): Promise<void> {
    if (ttlMs <= 0 || body.length > this.maxEntryBytes || !this.shared.ready()) return;
    try {
      await this.shared.client.set(`${this.ns}e:${key}`, `${tokens}\n${body}`, { PX: ttlMs });
    } catch {
      this.failed();
    }
  }

  /** Announces writes to tables ('all': every table) to every process: new tokens. */
  async bump(tables: readonly string[] | 'all'): Promise<void> {
    const keys = tables === 'all' ? [`${this.ns}gen`] : tables.map((t) => `${this.ns}v:${t}`);
    if (keys.length === 0) return;
    if (!this.shared.ready()) {
      this.owesGeneration = true;
      this.failed();
      return;
    }
    try {
      await this.shared.client.mSet(keys.map((k) => [k, this.token()] as [string, string]));
    } catch {
      this.owesGeneration = true;
      this.failed();
    }
  }

  private failed(): undefined {
    this.stats.redisErrors++;
    return undefined;
  }
}
