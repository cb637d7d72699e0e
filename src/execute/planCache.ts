/**
 * The plan cache: (query text, role, schema variant, operation name) → the
 * parsed operation, its variable coercer and its compiled plans, one per set
 * of values of the variables that shaped the plan ("structural" variables).
 * An entry belongs to one schema cache (one metadata version); a newer schema
 * cache makes it a miss and it is replaced. A repeated request skips parsing,
 * validation and compilation.
 *
 * Lookup is two-level (query text, then a short key) so that a hit hashes the
 * request's query string once and builds no long composite key. Eviction is
 * approximate LRU: each hit stamps its entry; when the cache is over capacity —
 * entries, or bytes (`--plan-cache-max-bytes`) — the least recently stamped
 * entries go until it is at three quarters.
 *
 * Bytes are estimated, not measured: an entry holds its query text, the parsed
 * document and, per plan, the IR and the SQL text. Measured on 42 KB queries
 * (bench/planCache.mjs): ~70 bytes of heap per byte of query text for the parsed
 * operation, its IR and plan together, plus the SQL text (UTF-16).
 */
import type { GraphQLInputType } from 'graphql';
import { sameKey, type Operation, type VariableCoercer } from '../ir/document.js';
import type { SchemaCache } from '../schema/model.js';
import type { QueryPlan } from './plan.js';
import type { OperationSize } from './apiLimits.js';

export interface PlanCacheStats {
  hits: number;
  misses: number;
}

export interface PlanCacheEntry {
  readonly cache: SchemaCache;
  readonly op: Operation;
  readonly coerce: VariableCoercer;
  /** most recently compiled first */
  plans: QueryPlan[];
  used: number;
  /** estimated heap bytes of the entry and its plans */
  bytes: number;
  /** the cache that holds the entry (for the byte count of plans added later) */
  owner: PlanCache;
  /** no longer in the cache: its plans are not counted */
  evicted?: boolean;
  /** the operation's depth and node count, measured once when API limits ask for them */
  size?: OperationSize;
}

const MAX_ENTRIES = 4096;
const MAX_PLANS_PER_ENTRY = 16;
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** heap per byte of query text of the parsed operation (estimate, see above) */
const DOCUMENT_BYTES_PER_CHAR = 40;
/** heap per byte of query text of a compiled plan's IR */
const PLAN_BYTES_PER_CHAR = 30;
const ENTRY_OVERHEAD = 2048;
const PLAN_OVERHEAD = 1024;

function planBytes(query: string, plan: QueryPlan): number {
  let sql = plan.statement ? plan.statement.compiled.text.length : 0;
  for (const f of plan.fields) if (f.kind === 'mutation') sql += f.plan.write.text.length + (f.plan.output?.text.length ?? 0);
  return PLAN_OVERHEAD + query.length * PLAN_BYTES_PER_CHAR + sql * 2;
}

/**
 * One per engine (`engine.planCache`, its byte budget from that engine's config; requests reach it
 * through `ExecContext.planCache`); nothing is shared between engines of one process.
 */
export class PlanCache {
  /** counters for tests and metrics */
  readonly stats: PlanCacheStats = { hits: 0, misses: 0 };
  private readonly byQuery = new Map<string, Map<string, PlanCacheEntry>>();
  private count = 0;
  private tick = 0;
  private totalBytes = 0;

  constructor(
    private readonly maxEntries = MAX_ENTRIES,
    private maxBytes = DEFAULT_MAX_BYTES,
  ) {}

  resetStats(): void {
    this.stats.hits = 0;
    this.stats.misses = 0;
  }

  /** Sets the byte budget (`--plan-cache-max-bytes`); evicts at once if over it. */
  setMaxBytes(maxBytes: number): void {
    this.maxBytes = maxBytes;
    if (this.totalBytes > this.maxBytes) this.evict();
  }

  /** estimated heap bytes held */
  get bytes(): number {
    return this.totalBytes;
  }

  /** the key below the query text */
  static subKey(role: string, operationName: string | null | undefined, variant: string): string {
    return `${role}\u0000${variant}\u0000${operationName ?? ''}`;
  }

  /** The entry of a query for this schema cache, if any. */
  get(query: string, subKey: string, cache: SchemaCache): PlanCacheEntry | undefined {
    const e = this.byQuery.get(query)?.get(subKey);
    if (!e || e.cache !== cache) return undefined;
    e.used = ++this.tick;
    return e;
  }

  /** A new (empty) entry for a parsed operation, replacing one of an older schema cache. */
  add(query: string, subKey: string, cache: SchemaCache, op: Operation, coerce: VariableCoercer): PlanCacheEntry {
    let m = this.byQuery.get(query);
    if (!m) this.byQuery.set(query, (m = new Map()));
    const old = m.get(subKey);
    if (old) {
      this.totalBytes -= old.bytes;
      old.evicted = true;
    } else this.count++;
    const e: PlanCacheEntry = {
      cache,
      op,
      coerce,
      plans: [],
      used: ++this.tick,
      bytes: ENTRY_OVERHEAD + query.length * (2 + DOCUMENT_BYTES_PER_CHAR),
      owner: this,
    };
    m.set(subKey, e);
    this.totalBytes += e.bytes;
    if (this.count > this.maxEntries || this.totalBytes > this.maxBytes) this.evict();
    return e;
  }

  /** The entry's plan built for the same values of its structural variables. */
  static plan(e: PlanCacheEntry, variables: Record<string, unknown>, types: Map<string, GraphQLInputType>): QueryPlan | undefined {
    const plans = e.plans;
    for (let i = 0; i < plans.length; i++) if (sameStructure(plans[i]!, variables, types)) return plans[i];
    return undefined;
  }

  /** Adds a compiled plan to an entry (`query`: the entry's query text, for the size estimate). */
  static addPlan(e: PlanCacheEntry, plan: QueryPlan, query = ''): void {
    const size = planBytes(query, plan);
    e.plans.unshift(plan);
    e.bytes += size;
    let dropped = 0;
    if (e.plans.length > MAX_PLANS_PER_ENTRY) {
      e.plans.pop();
      dropped = size; // the plans of one entry are alike: the dropped one is about as big
      e.bytes -= dropped;
    }
    if (!e.evicted) e.owner.grew(size - dropped);
  }

  private grew(bytes: number): void {
    this.totalBytes += bytes;
    if (this.totalBytes > this.maxBytes) this.evict();
  }

  /** Drops the least recently used entries until at most 3/4 of both budgets are used. */
  private evict(): void {
    const all: Array<[number, string, string]> = [];
    for (const [q, m] of this.byQuery) for (const [k, e] of m) all.push([e.used, q, k]);
    all.sort((a, b) => a[0] - b[0]);
    const entryTarget = Math.min(this.count - 1, Math.floor(this.maxEntries * 0.75));
    const byteTarget = Math.floor(this.maxBytes * 0.75);
    for (const [, q, k] of all) {
      if (this.count <= entryTarget && this.totalBytes <= byteTarget) break;
      const m = this.byQuery.get(q)!;
      const e = m.get(k)!;
      this.totalBytes -= e.bytes;
      e.evicted = true;
      m.delete(k);
      if (m.size === 0) this.byQuery.delete(q);
      this.count--;
    }
  }

  clear(): void {
    this.byQuery.clear();
    this.count = 0;
    this.totalBytes = 0;
  }

  get size(): number {
    return this.count;
  }
}

function sameStructure(p: QueryPlan, variables: Record<string, unknown>, types: Map<string, GraphQLInputType>): boolean {
  if (p.structural.size === 0) return true;
  for (const [name, key] of p.structural) {
    if (!sameKey(key, variables[name], types.get(name))) return false;
  }
  return true;
}

/**
 * The plan cache of a context that names none (tests, tools): one per schema cache, so still never
 * shared between engines (each builds its own schema caches).
 */
const ownCaches = new WeakMap<SchemaCache, PlanCache>();
export function planCacheOf(ctx: { planCache?: PlanCache; cache: SchemaCache }): PlanCache {
  if (ctx.planCache) return ctx.planCache;
  let c = ownCaches.get(ctx.cache);
  if (!c) ownCaches.set(ctx.cache, (c = new PlanCache()));
  return c;
}
