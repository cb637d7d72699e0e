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
 * approximate LRU: each hit stamps its entry; when the cache is over capacity
 * the least recently stamped quarter goes.
 */
import type { GraphQLInputType } from 'graphql';
import { sameKey, type Operation, type VariableCoercer } from '../ir/document.js';
import type { SchemaCache } from '../schema/model.js';
import type { QueryPlan } from './plan.js';

export interface PlanCacheStats {
  hits: number;
  misses: number;
}

/** Counters for tests and metrics. */
export const planCacheStats: PlanCacheStats = { hits: 0, misses: 0 };

export function resetPlanCacheStats(): void {
  planCacheStats.hits = 0;
  planCacheStats.misses = 0;
}

export interface PlanCacheEntry {
  readonly cache: SchemaCache;
  readonly op: Operation;
  readonly coerce: VariableCoercer;
  /** most recently compiled first */
  plans: QueryPlan[];
  used: number;
}

const MAX_ENTRIES = 4096;
const MAX_PLANS_PER_ENTRY = 16;

export class PlanCache {
  private readonly byQuery = new Map<string, Map<string, PlanCacheEntry>>();
  private count = 0;
  private tick = 0;

  constructor(private readonly maxEntries = MAX_ENTRIES) {}

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
    if (!m.has(subKey)) this.count++;
    const e: PlanCacheEntry = { cache, op, coerce, plans: [], used: ++this.tick };
    m.set(subKey, e);
    if (this.count > this.maxEntries) this.evict();
    return e;
  }

  /** The entry's plan built for the same values of its structural variables. */
  static plan(e: PlanCacheEntry, variables: Record<string, unknown>, types: Map<string, GraphQLInputType>): QueryPlan | undefined {
    const plans = e.plans;
    for (let i = 0; i < plans.length; i++) if (sameStructure(plans[i]!, variables, types)) return plans[i];
    return undefined;
  }

  static addPlan(e: PlanCacheEntry, plan: QueryPlan): void {
    e.plans.unshift(plan);
    if (e.plans.length > MAX_PLANS_PER_ENTRY) e.plans.pop();
  }

  private evict(): void {
    const all: Array<[number, string, string]> = [];
    for (const [q, m] of this.byQuery) for (const [k, e] of m) all.push([e.used, q, k]);
    all.sort((a, b) => a[0] - b[0]);
    for (const [, q, k] of all.slice(0, Math.max(1, Math.floor(all.length / 4)))) {
      const m = this.byQuery.get(q)!;
      m.delete(k);
      if (m.size === 0) this.byQuery.delete(q);
      this.count--;
    }
  }

  clear(): void {
    this.byQuery.clear();
    this.count = 0;
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

export const defaultPlanCache = new PlanCache();
