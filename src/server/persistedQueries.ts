/**
 * Automatic persisted queries (Apollo's APQ protocol): a request may carry
 * `extensions.persistedQuery {version: 1, sha256Hash}` and no `query`; the text is then looked up here
 * by its hash. A client that gets `PersistedQueryNotFound` resends the hash with the text, which is
 * checked against the hash and registered (src/server/graphqlHttp.ts).
 *
 * The store is per process, bounded by bytes (`--persisted-queries-max-bytes`) and evicts the least
 * recently used entries first. With `--redis-url` it is also shared: a registered text is written to
 * Redis (`<prefix>apq:<hash>`, expiring after a week unused, bounded by Redis's `maxmemory`) and a
 * hash unknown here is looked up there. Redis down or slow = not found there (the client resends
 * the text, one round trip more), never an error.
 */
import { sha256Hex } from '../core/hash.js';
import { SvcError } from '../errors.js';
import type { SharedStore } from '../db/redis.js';

/** seconds a text stays in Redis after it was last registered or read */
const SHARED_TTL_SECONDS = 7 * 24 * 3600;

/** bytes an entry costs beyond its text (the 64-character hash key and the map's bookkeeping) */
const ENTRY_OVERHEAD = 128;

export class PersistedQueryStore {
  private readonly entries = new Map<string, string>();
  private used = 0;
  constructor(
    readonly maxBytes: number,
    private readonly shared?: SharedStore,
  ) {}

  /**
   * The text of a hash: from this process's store, else (with Redis) from the shared one, which
   * is then kept here too. Undefined when unknown (or Redis is unreachable).
   */
  lookup(hash: string): string | undefined | Promise<string | undefined> {
    const local = this.get(hash);
    if (local !== undefined || !this.shared || !this.shared.ready()) return local;
    const key = `${this.shared.prefix}apq:${hash}`;
    return this.shared.client.getEx(key, { EX: SHARED_TTL_SECONDS }).then(
      (text) => {
        if (typeof text !== 'string' || sha256Hex(text) !== hash) return undefined;
        this.set(hash, text, false);
        return text;
      },
      () => undefined,
    );
  }

  /** the text registered under a hash (and marks it recently used) */
  get(hash: string): string | undefined {
    const text = this.entries.get(hash);
    if (text !== undefined) {
      this.entries.delete(hash);
      this.entries.set(hash, text);
    }
    return text;
  }

  /** registers a text (and, with Redis, shares it); false when it alone is larger than the whole store */
  set(hash: string, text: string, share = true): boolean {
    if (share && this.maxBytes > 0 && this.shared?.ready()) {
      // fire and forget: a failed write only costs another process one resend
      this.shared.client.set(`${this.shared.prefix}apq:${hash}`, text, { EX: SHARED_TTL_SECONDS }).catch(() => undefined);
    }
    const size = entrySize(text);
    if (size > this.maxBytes) return false;
    const old = this.entries.get(hash);
    if (old !== undefined) {
      this.entries.delete(hash);
      this.used -= entrySize(old);
    }
    while (this.used + size > this.maxBytes) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.used -= entrySize(this.entries.get(oldest.value)!);
      this.entries.delete(oldest.value);
    }
    this.entries.set(hash, text);
    this.used += size;
    return true;
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.used;
  }
}

function entrySize(text: string): number {
  return Buffer.byteLength(text) + ENTRY_OVERHEAD;
}

/** `extensions.persistedQuery` of a request: its hash, undefined without one; throws when malformed. */
export function persistedQueryHash(extensions: unknown): string | undefined {
  if (extensions === undefined || extensions === null) return undefined;
  if (typeof extensions !== 'object' || Array.isArray(extensions)) throw new SvcError(400, 'validation-failed', 'extensions must be an object', '$.extensions');
  const pq = (extensions as { persistedQuery?: unknown }).persistedQuery;
  if (pq === undefined || pq === null) return undefined;
  const path = '$.extensions.persistedQuery';
  if (typeof pq !== 'object' || Array.isArray(pq)) throw new SvcError(400, 'validation-failed', 'persistedQuery must be an object', path);
  const { version, sha256Hash } = pq as { version?: unknown; sha256Hash?: unknown };
  if (version !== 1)
    throw new SvcError(400, 'validation-failed', 'PersistedQueryNotSupported: only version 1 of persisted queries is supported', `${path}.version`);
  if (typeof sha256Hash !== 'string' || !/^[0-9a-fA-F]{64}$/.test(sha256Hash))
    throw new SvcError(400, 'validation-failed', 'persistedQuery.sha256Hash must be the hex SHA-256 of the query', `${path}.sha256Hash`);
  return sha256Hash.toLowerCase();
}

export const persistedQueryNotFound = () => new SvcError(200, 'PERSISTED_QUERY_NOT_FOUND', 'PersistedQueryNotFound', '$.extensions.persistedQuery');
export const persistedQueryMismatch = () =>
  new SvcError(400, 'validation-failed', 'provided sha does not match query', '$.extensions.persistedQuery.sha256Hash');
