/**
 * A `@cached` query's request (issue 37 item 3): the key, a lookup, and on a miss the statement
 * run with the versions of its tables captured first, its response stored. The plan's facts
 * (tables read, session variables read, the constant part of the key) are computed once per
 * cached plan, so a hit costs a hash, a lookup and the write of the response.
 *
 * Headers (set through src/http/responseHeaders.ts): `Cache-Control: max-age=<seconds left>`,
 * `X-Svc-Query-Cache-Key: <key>`, `X-Svc-Query-Cache: hit | miss | bypass`.
 */
import { argValue, checkTtl, DEFAULT_TTL_SECONDS } from '../cache/directive.js';
import type { CachePolicy } from '../cache/policy.js';
import { sha256Hex as sha256 } from '../core/hash.js';
import type { ResponseCache } from '../cache/responseCache.js';
import { useBackendOnlyPermissions } from '../core/session.js';
import { setResponseHeader } from '../http/responseHeaders.js';
import type { ExecContext } from './interface.js';
import type { QueryPlan } from './plan.js';

/** The plan's cache facts (computed at its first @cached request and kept on the plan until the tracker re-reads the catalog). */
export function cachePolicy(ctx: ExecContext, rc: ResponseCache, plan: QueryPlan, operationName: string | null | undefined, relay: boolean): CachePolicy {
  const kept = plan.cachePolicy;
  if (kept && kept.catalog === rc.catalogVersion) return kept;
  let bypass: string | undefined;
  for (const f of plan.fields) if (f.kind === 'action' || f.kind === 'remote') bypass = 'the query uses an action or a remote schema';
  if (plan.remote) bypass = 'the query uses a remote schema';
  const text = plan.statement?.compiled.text ?? '';
  const read = rc.tablesRead(text);
  if (!read.tables)
    bypass ??= 'what the query reads cannot be known (a function with dynamic SQL or in another language, a materialized view, a foreign table)';
  // `($1)::`: the whole session is a function's argument: key by all of it
  const sessionVars = text.includes('($1)::') ? null : [...plan.sessionVars].sort();
  const variant = `${ctx.config.stringifyNumericTypes ? 's' : ''}${useBackendOnlyPermissions(ctx.session) ? 'b' : ''}${relay ? 'r' : ''}`;
  const base = sha256([rc.dbId, ctx.cache.resourceVersion, ctx.session.role, variant, operationName ?? '', plan.cachedDirective!.text].join('\u0000'));
  const policy: CachePolicy = { tables: read.tables ?? [], sessionVars, base, catalog: read.catalog, ...(bypass ? { bypass } : {}) };
  if (plan.cached) plan.cachePolicy = policy;
  return policy;
}

const ttlOf = (v: unknown) => (typeof v === 'number' ? checkTtl(v, '$.variableValues') : undefined);
const boolOf = (v: unknown) => (typeof v === 'boolean' ? v : undefined);

/**
 * Answers a @cached query: from the cache, or by `run` (the statement on the primary) whose
 * response is stored. `run` errors are not stored.
 */
export function runCached(
  ctx: ExecContext,
  rc: ResponseCache,
  plan: QueryPlan,
  variables: Record<string, unknown>,
  operationName: string | null | undefined,
  relay: boolean,
  run: () => Promise<string>,
): Promise<string> {
  const policy = cachePolicy(ctx, rc, plan, operationName, relay);
  const args = plan.cachedDirective!.args;
  const ttl = argValue(args.ttl, variables, DEFAULT_TTL_SECONDS, ttlOf);
  const refresh = argValue(args.refresh, variables, false, boolOf);
  // (an entry is stored only while every table it reads gives a change signal)
  if (policy.bypass || !rc.available() || !rc.watched(policy.tables)) {
    rc.stats.bypasses++;
    setResponseHeader(ctx.headers, 'x-svc-query-cache', 'bypass');
    return run();
  }
  const key = rc.key(policy.base, variables, policy.sessionVars, ctx.session.vars);
  setResponseHeader(ctx.headers, 'x-svc-query-cache-key', key);
  const miss = (): Promise<string> => {
    rc.stats.misses++;
    setResponseHeader(ctx.headers, 'x-svc-query-cache', 'miss');
    setResponseHeader(ctx.headers, 'cache-control', `max-age=${ttl}`);
    // the versions are captured before the statement runs: a write committed after its snapshot
    // changes them, and the entry is never served
    const captured = rc.capture(policy.tables);
    const go = (versions: number[] | string | undefined) =>
      run().then((body) => {
        if (versions === undefined || ttl === 0 || !body.startsWith('{"data"')) return body;
        const stored = rc.set(key, body, ttl, policy.tables, versions);
        return stored instanceof Promise ? stored.then(() => body) : body;
      });
    return captured instanceof Promise ? captured.then(go) : go(captured);
  };
  if (refresh) return miss();
  // strict mode (--query-cache-strict): every write committed before now is counted before the lookup
  if (rc.strict)
    return rc.beforeLookup().then(
      () => lookup(),
      () => miss(),
    );
  return lookup();
  function lookup(): Promise<string> {
    const found = rc.get(key, policy.tables);
    return found instanceof Promise ? found.then(answer) : answer(found);
  }
  function answer(hit: { body: string; remainingMs: number } | undefined): Promise<string> {
    if (!hit) return miss();
    rc.stats.hits++;
    setResponseHeader(ctx.headers, 'x-svc-query-cache', 'hit');
    setResponseHeader(ctx.headers, 'cache-control', `max-age=${Math.ceil(hit.remainingMs / 1000)}`);
    return Promise.resolve(hit.body);
  }
}

/** `schema.table` of the tables a mutation plan writes (inserts nested through relationships included). */
export function writtenTables(plan: QueryPlan): string[] {
  if (plan.written) return plan.written;
  const out = new Set<string>();
  const insert = (i: {
    table: { info: { schema: string; name: string } };
    rows: Array<{ objectRels: Array<{ insert: unknown }>; arrayRels: Array<{ insert: unknown }> }>;
  }) => {
    out.add(`${i.table.info.schema}.${i.table.info.name}`);
    for (const r of i.rows) for (const n of [...r.objectRels, ...r.arrayRels]) insert(n.insert as Parameters<typeof insert>[0]);
  };
  for (const f of plan.fields) {
    if (f.kind !== 'mutation' || f.ir.kind !== 'mutation') continue;
    const m = f.ir.mutation;
    if (m.kind === 'insert') insert(m.insert);
    else if (m.kind === 'update') out.add(`${m.update.table.info.schema}.${m.update.table.info.name}`);
    else out.add(`${m.delete.table.info.schema}.${m.delete.table.info.name}`);
  }
  return (plan.written = [...out]);
}
