/**
 * Running GraphQL reads: plan (cached) → bind session and variables → one
 * statement → the `data` object spliced from the JSON text PostgreSQL built.
 * Also `/v1/graphql/explain`.
 */
import { SvcError } from '../errors.js';
import { sessionVariableNotFound } from '../permissions/messages.js';
import { ArgReader, expectObject } from '../document/args.js';
import { coerceVariables, variableCoercer } from '../ir/document.js';
import { getRoleSchema, roleSchemaPending, type RoleSchema } from '../schema/graphql/schema.js';
import type { SchemaCache } from '../schema/model.js';
import { ADMIN_ROLE, useBackendOnlyPermissions, type Session } from '../core/session.js';
import { bindParams, compileSql } from '../sql/ast.js';
import { fieldStatementSql, type SelectCompileOptions } from '../sql/select.js';
import { errorResponse, fromPgError, showInternalErrors, type ErrorFormat } from './errors.js';
export { errorObject, asSvcError, type ErrorFormat } from './errors.js';
import type { ExecContext, GraphQLRequest, PlanExecutor, RunOptions } from './interface.js';
export type { RunOptions } from './interface.js';
import { executeMutationPlan } from './mutation.js';
import { compilePlan, operationRootFields, parseDocument, type QueryPlan } from './plan.js';
import { batchParams, batchStatement } from './multiplex.js';
import { PlanCache, planCacheOf } from './planCache.js';
import { checkOperationSize, measureOperation, roleLimits } from './apiLimits.js';
import { executeThrough } from './hooks.js';
import { runCached, writtenTables } from './cached.js';

import type { Attributes } from '@opentelemetry/api';
import { tracing, type Span } from '../core/tracing.js';
import { performance } from 'node:perf_hooks';

/**
 * The `query-log` line (deployment/logging.rst), when that log type is enabled: the GraphQL
 * request and, for queries, the SQL that answers each root field with its prepared arguments
 * (all root fields of a query share one statement here). `null` for mutations and subscriptions.
 */
export function logQuery(ctx: ExecContext, req: GraphQLRequest, plan: QueryPlan, opts: RunOptions, params: unknown[] | undefined): void {
  let generated: Record<string, { query: string; prepared_arguments: unknown[] }> | null = null;
  if (plan.opType === 'query' && plan.statement && params) {
    generated = {};
    const one = { query: plan.statement.compiled.text, prepared_arguments: params };
    for (const f of plan.fields) if (f.kind === 'db') generated[f.alias] = one;
  }
  ctx.log.info({
    type: 'query-log',
    detail: {
      request_id: opts.requestId ?? null,
      query: { query: req.query, variables: req.variables ?? null, operationName: req.operationName ?? null },
      generated_sql: generated,
    },
  });
}

function compileOptions(ctx: ExecContext): SelectCompileOptions {
  return { stringifyNumerics: ctx.config.stringifyNumericTypes };
}

function errorFormat(ctx: ExecContext, opts: RunOptions): ErrorFormat {
  return { v1alpha1: opts.v1alpha1, legacy: opts.legacyErrors, includeInternal: showInternalErrors(ctx.config, ctx.session) };
}

/**
 * The plan for a request (from the cache when possible) and its coerced variables. With tracing on,
 * a span `svc.graphql.plan` under the request's (`ctx.span`; none without one: a live query's
 * re-plan is not a request) with, on a miss, `svc.graphql.parse` (parse and document limits) under it.
 */
export function planRequest(
  ctx: ExecContext,
  req: GraphQLRequest,
  cache: PlanCache = planCacheOf(ctx),
  relay = false,
): { plan: QueryPlan; variables: Record<string, unknown> } {
  const t = tracing;
  if (!t || !ctx.span) return planRequestNow(ctx, req, cache, relay);
  const span = t.start('svc.graphql.plan', undefined, { parent: ctx.span });
  const misses = cache.stats.misses;
  try {
    const out = planRequestNow(ctx, req, cache, relay, span);
    span.setAttributes(cache.stats.misses === misses ? planHitAttributes(t, out.plan, req.operationName) : planAttributes(false, out.plan, req.operationName));
    return out;
  } catch (e) {
    const err = e instanceof SvcError ? e : undefined;
    t.fail(span, err?.code ?? 'unexpected', e instanceof Error ? e.message : String(e));
    throw e;
  } finally {
    span.end();
  }
}

function planAttributes(hit: boolean, plan: QueryPlan, operationName: string | null | undefined): Attributes {
  return {
    'svc.plan_cache.hit': hit,
    'graphql.operation.type': plan.opType,
    ...(operationName ? { 'graphql.operation.name': operationName } : {}),
  };
}

/** a cached plan's span attributes, kept by the tracer as a constant (encoded once); a plan is cached per operation name */
function planHitAttributes(t: NonNullable<typeof tracing>, plan: QueryPlan, operationName: string | null | undefined): Attributes {
  const attrs = t.constant(plan, (p) => planAttributes(true, p, operationName));
  // a plan reached under another operation name than the one its attributes were made with: its own
  return attrs['graphql.operation.name'] === (operationName || undefined) ? attrs : planAttributes(true, plan, operationName);
}

function parseTraced(req: GraphQLRequest, config: ExecContext['config'], parent: Span | undefined): ReturnType<typeof parseDocument> {
  const t = tracing;
  if (!t || !parent) return parseDocument(req.query, req.operationName, config);
  const span = t.start('svc.graphql.parse', { 'svc.query.bytes': req.query.length }, { parent });
  try {
    return parseDocument(req.query, req.operationName, config);
  } catch (e) {
    t.fail(span, e instanceof SvcError ? e.code : 'unexpected', e instanceof Error ? e.message : String(e));
    throw e;
  } finally {
    span.end();
  }
}

/** `span`: the plan span (tracing on), parent of the parse span */
function planRequestNow(
  ctx: ExecContext,
  req: GraphQLRequest,
  cache: PlanCache,
  relay: boolean,
  span?: Span,
): { plan: QueryPlan; variables: Record<string, unknown> } {
  if (typeof req.query !== 'string') throw new SvcError(400, 'validation-failed', 'the query is not a string', '$.query');
  const backendOnly = useBackendOnlyPermissions(ctx.session);
  // the output format (stringified numerics) and the schema variant are part of the compiled statement
  const variant = (ctx.config.stringifyNumericTypes ? (backendOnly ? 'sb' : 's') : backendOnly ? 'b' : '') + (relay ? 'r' : '');
  const sub = PlanCache.subKey(ctx.session.role, req.operationName, variant);
  let entry = cache.get(req.query, sub, ctx.cache);
  let rs: RoleSchema | undefined;
  if (!entry) {
    rs = getRoleSchema(ctx.cache, ctx.session.role, backendOnly, relay);
    const op = parseTraced(req, ctx.config, span);
    entry = cache.add(req.query, sub, ctx.cache, op, variableCoercer(rs.schema, op.def));
  }
  // API limits (issue 36): depth and node count measured once per entry
  const limits = roleLimits(ctx.cache, ctx.session.role);
  if (limits && (limits.depth !== undefined || limits.nodes !== undefined)) checkOperationSize((entry.size ??= measureOperation(entry.op)), limits);
  const vars = entry.coerce(req.variables ?? {});
  const hit = PlanCache.plan(entry, vars.values, vars.types);
  if (hit) {
    cache.stats.hits++;
    return { plan: hit, variables: vars.values };
  }
  cache.stats.misses++;
  const plan = compilePlan(rs ?? getRoleSchema(ctx.cache, ctx.session.role, backendOnly, relay), entry.op, vars, compileOptions(ctx));
  if (worthCaching(plan)) {
    plan.cached = true;
    PlanCache.addPlan(entry, plan, req.query);
  }
  return { plan, variables: vars.values };
}

/**
 * A mutation whose plan holds a variable's whole value is rarely repeated
 * with the same value (objects given as a variable are keyed by their shape,
 * their leaves are parameters); a large one (many objects written in the
 * query) costs more memory than compiling it again.
 */
function worthCaching(plan: QueryPlan): boolean {
  if (plan.opType !== 'mutation') return true;
  for (const k of plan.structural.values()) if (k.kind === 'value') return false;
  const size = plan.fields.reduce((n, f) => n + (f.kind === 'mutation' ? f.plan.write.text.length + (f.plan.output?.text.length ?? 0) : 0), 0);
  return size <= 64 * 1024;
}

export function checkSessionVariables(plan: QueryPlan, session: Session): void {
  for (const v of plan.sessionVars) {
    if (session.vars[v] === undefined) throw sessionVariableNotFound(v);
  }
}

/** The response of a read plan from its statement's row (JSON text per column). */
export function readResponse(plan: QueryPlan, row: Record<string, string | null>): string {
  const { texts, columns } = plan.response!;
  let out = texts[0]!;
  for (let i = 0; i < columns.length; i++) out += (row[columns[i]!] ?? 'null') + texts[i + 1]!;
  return out;
}

/** The `data` of a mutation: one JSON text per root field, in order. */
export function mutationResponse(plan: QueryPlan, results: string[]): string {
  return `{"data":{${plan.fields.map((f, i) => `${JSON.stringify(f.alias)}:${results[i]}`).join(',')}}}`;
}

/**
 * `/v1/graphql` (and `/v1alpha1/graphql` with `v1alpha1`): the response JSON
 * text, `{"data":…}` or `{"errors":[…]}`. A read is planned synchronously (a
 * plan-cache hit is a few lookups) and answered from its one statement's row.
 */
export function runGraphQL(reqCtx: ExecContext, req: GraphQLRequest, opts: RunOptions = {}): Promise<string> {
  // a role's first request waits for its schema, built without holding the event loop (issue 30
  // item 9); its failure is the planning's (the synchronous build below throws it again)
  const pending = roleSchemaPending(reqCtx.cache, reqCtx.session.role, useBackendOnlyPermissions(reqCtx.session), opts.relay === true);
  if (pending)
    return pending.then(
      () => runPlanned(reqCtx, req, opts),
      () => runPlanned(reqCtx, req, opts),
    );
  return runPlanned(reqCtx, req, opts);
}

function runPlanned(reqCtx: ExecContext, req: GraphQLRequest, opts: RunOptions): Promise<string> {
  const ctx = reqCtx;
  const fail = (e: unknown): string => {
    if (!(e instanceof SvcError)) ctx.log.error({ err: e instanceof Error ? { message: e.message, stack: e.stack } : e }, 'graphql execution failed');
    return errorResponse(e, errorFormat(ctx, opts));
  };
  try {
    const { plan, variables } = planRequest(ctx, req, opts.planCache, opts.relay);
    if (opts.info) opts.info.opType = plan.opType;
    checkSessionVariables(plan, ctx.session);
    // the execute hooks (execute/hooks.ts: the time limit, …), then the plan's executor
    return executeThrough(ctx.hooks, { ctx, req, opts, plan, variables, fail }, (c) => runPlan(c.ctx, c.req, c.opts, c.plan, c.variables, c.fail));
  } catch (e) {
    if (opts.rejectPreExec && e instanceof SvcError) return Promise.reject(e);
    return Promise.resolve(fail(e));
  }
}

/**
 * How a plan is executed, by the kinds of its root fields (computed once per plan: `executorOf`):
 * - `read`: one statement (database fields of a query), the response spliced from its row — or
 *   from the response cache (`@cached`, src/execute/cached.ts);
 * - `constant`: a query without a database field (`__typename`, introspection alone);
 * - `mutation`: one transaction (src/execute/mutation.ts), then the response cache told what changed;
 * - `actions`, `remote`, `remote-actions`: answered by the schema extensions' executors
 *   (`ctx.executors`, assembled in src/extensions.ts: src/actions/execute.ts, src/remote/execute.ts).
 */
type CoreExecutorKind = 'read' | 'constant' | 'mutation';
type ExecutorKind = CoreExecutorKind | 'actions' | 'remote' | 'remote-actions';

const executorKinds = new WeakMap<QueryPlan, ExecutorKind>();
function executorOf(plan: QueryPlan): ExecutorKind {
  let k = executorKinds.get(plan);
  if (k === undefined) {
    const actions = plan.fields.some((f) => f.kind === 'action');
    k = plan.remote
      ? actions
        ? 'remote-actions'
        : 'remote'
      : actions
        ? 'actions'
        : plan.opType === 'mutation'
          ? 'mutation'
          : plan.statement
            ? 'read'
            : 'constant';
    executorKinds.set(plan, k);
  }
  return k;
}

/** the kinds answered here; the others by the schema extensions (`ctx.executors`, src/extensions.ts) */
const EXECUTORS: Record<CoreExecutorKind, PlanExecutor> = {
  read(ctx, req, opts, plan, variables, fail) {
    const { name, compiled } = plan.statement!;
    const run = (values = bindParams(compiled, ctx.session.vars, variables)) => {
      const q0 = performance.now();
      return ctx.db.prepared(name, compiled.text, values, ctx.signal).then(
        (r) => {
          ctx.histograms?.sqlTime.query.observe((performance.now() - q0) / 1000);
          return readResponse(plan, r.rows[0] ?? {});
        },
        (e) => fail(fromPgError(e, { text: compiled.text, params: values, prepared: ctx.db.usePrepared })),
      );
    };
    if (ctx.config.enabledLogTypes.includes('query-log')) logQuery(ctx, req, plan, opts, bindParams(compiled, ctx.session.vars, variables));
    // @cached (src/execute/cached.ts): answered from the response cache, or run and stored
    if (plan.cachedDirective && ctx.responseCache)
      return runCached(ctx, ctx.responseCache, plan, variables, req.operationName, opts.relay === true, () => run()).catch(fail);
    return run();
  },
  constant(ctx, req, opts, plan) {
    if (ctx.config.enabledLogTypes.includes('query-log')) logQuery(ctx, req, plan, opts, undefined);
    return Promise.resolve(readResponse(plan, {}));
  },
  mutation(ctx, req, opts, plan, variables, fail) {
    if (ctx.config.enabledLogTypes.includes('query-log')) logQuery(ctx, req, plan, opts, undefined);
    const m0 = performance.now();
    return executeMutationPlan(ctx, plan, variables).then((results) => {
      ctx.histograms?.sqlTime.mutation.observe((performance.now() - m0) / 1000);
      // the response cache stops serving what this mutation changed before its response is sent
      const rc = ctx.responseCache;
      const told = rc?.active ? rc.wrote(writtenTables(plan)) : undefined;
      return told ? told.then(() => mutationResponse(plan, results)) : mutationResponse(plan, results);
    }, fail);
  },
};

function runPlan(
  reqCtx: ExecContext,
  req: GraphQLRequest,
  opts: RunOptions,
  plan: QueryPlan,
  variables: Record<string, unknown>,
  fail: (e: unknown) => string,
): Promise<string> {
  let ctx = reqCtx;
  try {
    // a query reads from the replicas when there are any; a mutation (and all it reads after) stays on the primary
    // (a @cached query reads from the primary: the change signal that invalidates it is the primary's)
    if (plan.opType !== 'mutation' && ctx.readDb && !plan.cachedDirective) ctx = { ...ctx, db: ctx.readDb };
    const kind = executorOf(plan);
    const run = kind === 'read' || kind === 'constant' || kind === 'mutation' ? EXECUTORS[kind] : ctx.executors[kind];
    return run(ctx, req, opts, plan, variables, fail);
  } catch (e) {
    if (opts.rejectPreExec && e instanceof SvcError) return Promise.reject(e);
    return Promise.resolve(fail(e));
  }
}

export interface ExplainBody {
  query: GraphQLRequest | string;
  user?: Record<string, string> | null;
}

export interface FieldPlanExplain {
  field: string;
  sql: string | null;
  plan: string[] | null;
}

/** `/v1/graphql/explain`: the SQL and PostgreSQL plan of every root field, with the given session. */
/** The explain body, checked as upstream's aeson parser does (400 `parse-failed`, never a 500). */
function parseExplainBody(raw: unknown): { req: GraphQLRequest; user: Record<string, unknown> } {
  const b = new ArgReader(raw, '$', 'GQLExplain', false);
  const q = b.required('query');
  let req: GraphQLRequest;
  if (typeof q === 'string') req = { query: q };
  else {
    const r = new ArgReader(q, '$.query', 'GQLReq', false);
    const query = r.string('query');
    const variables = r.raw('variables');
    if (variables !== undefined && variables !== null) expectObject(variables, '$.query.variables', 'HashMap Name Value');
    const operationName = r.string('operationName', true);
    req = { query, variables: (variables as Record<string, unknown> | null | undefined) ?? null, operationName: operationName ?? null };
  }
  const user = b.object('user', true) ?? {};
  return { req, user };
}

export async function explainGraphQL(ctx: ExecContext, body: ExplainBody | unknown): Promise<FieldPlanExplain[] | { sql: string; plan: string[] }> {
  const { req, user } = parseExplainBody(body);
  const vars: Record<string, string> = {};
  for (const [k, v] of Object.entries(user)) vars[k.toLowerCase()] = String(v);
  const role = vars['x-svc-role'] ?? ADMIN_ROLE;
  const session: Session = { role, vars, hasAdminCredentials: true };
  const cache: SchemaCache = ctx.cache;
  const rs = getRoleSchema(cache, role);
  const op = parseDocument(req.query, req.operationName, ctx.config);
  const coerced = coerceVariables(rs.schema, op.def, req.variables ?? {});
  if (op.def.operation === 'subscription') return explainSubscription(ctx, rs, op, coerced, session);
  const { opType, fields } = operationRootFields(rs, op, coerced);
  if (opType === 'mutation') throw new SvcError(400, 'invalid-params', 'only queries can be explained', '$');
  const out: FieldPlanExplain[] = [];
  for (const f of fields) {
    if (f.kind === 'const' || f.kind === 'action' || f.kind === 'remote') {
      out.push({ field: f.alias, sql: null, plan: null });
      continue;
    }
    const c = compileSql(fieldStatementSql(f, compileOptions(ctx)), { session: session.vars, variables: coerced.values });
    for (const v of c.sessionVars) {
      if (session.vars[v] === undefined) throw sessionVariableNotFound(v);
    }
    let plan: string[];
    try {
      const r = await ctx.db.query(`EXPLAIN ${c.text}`);
      plan = r.rows.map((x) => String(x['QUERY PLAN']));
    } catch (e) {
      throw fromPgError(e, { text: c.text, params: [], prepared: false });
    }
    out.push({ field: f.alias, sql: c.text, plan });
  }
  return out;
}

/**
 * A subscription's explain: the multiplexed statement its live query runs (parameters stay
 * `$1`/`$2`, so subscriptions that differ only in variable values show the same SQL) and
 * PostgreSQL's plan for a batch of one subscriber with the given session and variables.
 */
async function explainSubscription(
  ctx: ExecContext,
  rs: RoleSchema,
  op: ReturnType<typeof parseDocument>,
  coerced: ReturnType<typeof coerceVariables>,
  session: Session,
): Promise<{ sql: string; plan: string[] }> {
  const plan = compilePlan(rs, op, coerced, compileOptions(ctx));
  if (!plan.statement || !plan.multiplexed) return { sql: '', plan: [] };
  checkSessionVariables(plan, session);
  const { text } = batchStatement(plan);
  const params = batchParams([{ id: 1, values: JSON.stringify(bindParams(plan.statement.compiled, session.vars, coerced.values)) }]);
  try {
    const r = await ctx.db.query(`EXPLAIN ${text}`, params);
    return { sql: text, plan: r.rows.map((x) => String(x['QUERY PLAN'])) };
  } catch (e) {
    throw fromPgError(e, { text, params, prepared: false });
  }
}
