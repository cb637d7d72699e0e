/**
 * The plan cache: (resource version, role, operation name, query text) →
 * the parsed operation and its compiled plans, one per set of values of the
 * variables that shaped the plan ("structural" variables). A repeated
 * request skips parsing, validation and compilation.
 */
import type { Operation } from '../ir/document.js';
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

interface Entry {
  cache: SchemaCache;
  op: Operation;
  plans: QueryPlan[];
}

const MAX_ENTRIES = 4096;
const MAX_PLANS_PER_ENTRY = 16;

export class PlanCache {
  private readonly entries = new Map<string, Entry>();

  static key(cache: SchemaCache, role: string, query: string, operationName: string | null | undefined, variant = ''): string {
    return `${cache.resourceVersion}\u0000${role}\u0000${variant}\u0000${operationName ?? ''}\u0000${query}`;
  }

  operation(key: string, cache: SchemaCache): Operation | undefined {
    const e = this.entries.get(key);
    return e && e.cache === cache ? e.op : undefined;
  }

  /** A plan built for the same values of its structural variables. */
  plan(key: string, cache: SchemaCache, variables: Record<string, unknown>): QueryPlan | undefined {
    const e = this.entries.get(key);
    if (!e || e.cache !== cache) return undefined;
    const p = e.plans.find((x) => sameStructure(x, variables));
    if (p) {
      // keep recently used entries last (LRU eviction from the front)
      this.entries.delete(key);
      this.entries.set(key, e);
    }
    return p;
  }

  put(key: string, cache: SchemaCache, op: Operation, plan: QueryPlan): void {
    let e = this.entries.get(key);
    if (!e || e.cache !== cache) {
      e = { cache, op, plans: [] };
      this.entries.delete(key);
      this.entries.set(key, e);
      while (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    }
    e.plans.unshift(plan);
    if (e.plans.length > MAX_PLANS_PER_ENTRY) e.plans.pop();
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

function sameStructure(p: QueryPlan, variables: Record<string, unknown>): boolean {
  for (const [name, value] of p.structural) {
    if (JSON.stringify(variables[name]) !== JSON.stringify(value)) return false;
  }
  return true;
}

export const defaultPlanCache = new PlanCache();
