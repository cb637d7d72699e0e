/**
 * The per-role artefacts of a schema cache (`SchemaCache.perRole`: each role's GraphQL schema),
 * bounded (issue 30 item 9): entries are weighed when stored (an estimate of their memory) and the
 * least recently used ones are dropped once the total passes the budget
 * (`--role-schema-cache-max-bytes`); a dropped role's schema is built again on its next request.
 * The entry just stored is always kept, so one schema larger than the budget still serves.
 */
export class BoundedRoleCache extends Map<string, unknown> {
  private readonly weights = new Map<string, number>();
  private total = 0;
  /** entries dropped to stay within the budget (for tests and metrics) */
  evictions = 0;

  /** `maxBytes`: the engine's budget (its configuration); the default where none is given (tests, tools) */
  constructor(readonly maxBytes = 256 * 1024 * 1024) {
    super();
  }

  override get(key: string): unknown {
    const v = super.get(key);
    if (v !== undefined) {
      // most recently used last
      super.delete(key);
      super.set(key, v);
    }
    return v;
  }

  /** Stores an entry of an estimated `weight` bytes, dropping the least recently used beyond the budget. */
  setWeighed(key: string, value: unknown, weight: number): this {
    this.delete(key);
    super.set(key, value);
    this.weights.set(key, weight);
    this.total += weight;
    for (const k of super.keys()) {
      if (this.total <= this.maxBytes || k === key) break;
      this.delete(k);
      this.evictions++;
    }
    return this;
  }

  override set(key: string, value: unknown): this {
    return this.setWeighed(key, value, 0);
  }

  override delete(key: string): boolean {
    this.total -= this.weights.get(key) ?? 0;
    this.weights.delete(key);
    return super.delete(key);
  }

  override clear(): void {
    this.weights.clear();
    this.total = 0;
    super.clear();
  }

  /** the estimated bytes held */
  get bytes(): number {
    return this.total;
  }
}
