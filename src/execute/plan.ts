/**
 * Compiling an operation into a plan: root fields → IR (through the role
 * schema's parsers) → one SQL statement for all database fields, plus
 * constant JSON for `__typename` and introspection. A plan depends on the
 * query text, the role's schema and the values of "structural" variables
 * only; leaf variables and session variables are statement parameters.
 */
import { createHash } from 'node:crypto';
import { type GraphQLField, type GraphQLObjectType } from 'graphql';
import { SvcError } from '../errors.js';
import { parseWithinLimits, type DocumentLimits } from './limits.js';
import { DocumentContext, selectOperation, type CoercedVariables, type CollectedField, type Operation, type StructuralKey } from '../ir/document.js';
import { fieldNotFound, noMutations, validationError } from '../ir/messages.js';
import type { RootField, ActionField } from '../ir/types.js';
import { svcExt } from '../schema/graphql/builder.js';
import { introspectionRoot } from '../schema/graphql/introspection.js';
import type { RoleSchema } from '../schema/graphql/schema.js';
import { checkLeaf, type SelectionParser } from '../schema/graphql/select.js';
import { compileSql, type CompiledSql } from '../sql/ast.js';
import { compileMutation, type RaisedError } from '../sql/mutation.js';
import { rootResponseSql, rootStatementSql, type SelectCompileOptions } from '../sql/select.js';
import { planRemote, type RemotePlan } from './remotePlan.js';
import { cachedDirective, type CachedArgs } from '../cache/directive.js';
import { normalisedQuery, type CachePolicy } from '../cache/policy.js';

export type OperationType = 'query' | 'mutation' | 'subscription';

export type PlanField =
  | { alias: string; kind: 'const'; json: string }
  /** column `column` of the plan's statement */
  | { alias: string; kind: 'db'; column: number; ir: RootField }
  /** a mutation root field: its own statements, run in the operation's transaction */
  | { alias: string; kind: 'mutation'; plan: MutationFieldPlan; ir: RootField }
  /** an action: answered by its handler (src/actions/execute.ts) */
  | { alias: string; kind: 'action'; field: ActionField }
  /** a root field of a remote schema: `plan.remote` sends it */
  | { alias: string; kind: 'remote' };

/** The statements of one mutation root field (see sql/mutation.ts). */
export interface MutationFieldPlan {
  /** returns "result", or "affected" and "rows" for `output` */
  write: CompiledSql;
  output: CompiledSql | null;
  raises: RaisedError[];
  /** where database errors are reported */
  errorPath: string;
  /** prepared-statement name of `write` (used when the plan is cached) */
  name: string;
}

export interface QueryPlan {
  opType: OperationType;
  /** variables whose values (or shapes) shaped this plan */
  structural: Map<string, StructuralKey>;
  fields: PlanField[];
  statement: { name: string; compiled: CompiledSql } | null;
  /** session variables the statement reads (must be present) */
  sessionVars: string[];
  /**
   * reads: the response text is `texts[0] + row[columns[0]] + texts[1] + …`,
   * the statement's JSON columns spliced between the constant parts
   */
  response?: { texts: string[]; columns: string[] };
  /** the plan is in the plan cache: its statements are worth preparing */
  cached?: boolean;
  /**
   * subscriptions: the statement with each parameter `$n` read from the batch row of a subscriber
   * (`multiplexedParam(n)`), for the multiplexed live-query statement (subscriptions/liveQueryManager.ts)
   */
  multiplexed?: CompiledSql;
  /** remote root fields and remote relationships (execute/remotePlan.ts) */
  remote?: RemotePlan;
  /** `@cached` on the query (src/cache): its arguments and the normalised query text */
  cachedDirective?: { args: CachedArgs; text: string };
  /** the response cache's facts of this plan, computed at its first @cached request */
  cachePolicy?: CachePolicy;
  /** mutations: `schema.table` of the tables the plan writes (computed when the response cache needs it) */
  written?: string[];
  /** (actions, computed at its first call) the index of its one action field when every other root field is constant, else -1 */
  soleAction?: number;
}

/** A subscriber's parameter n inside the multiplexed statement: element n-1 of its JSON array of values. */
export const multiplexedParam = (n: number): string => `("_subs"."result_vars"->>${n - 1})`;

/** Parses a request's document within the document limits (execute/limits.ts) and picks its operation. */
export function parseDocument(query: string, operationName: string | null | undefined, limits?: DocumentLimits): Operation {
  return selectOperation(parseWithinLimits(query, limits), operationName);
}

/** Root fields of an operation as IR. */
export function operationRootFields(
  rs: RoleSchema,
  op: Operation,
  vars: CoercedVariables,
): { opType: OperationType; ctx: DocumentContext; fields: RootField[] } {
  const opType = op.def.operation as OperationType;
  let root: GraphQLObjectType | null;
  if (opType === 'mutation') {
    root = rs.mutation;
    if (!root) throw noMutations();
  } else if (opType === 'subscription') {
    root = rs.subscription;
  } else {
    root = rs.query;
  }
  const ctx = new DocumentContext(rs.schema, op.fragments, vars.values, vars.types);
  const defs = root!.getFields();
  const fields: RootField[] = [];
  for (const f of ctx.collect([{ set: op.def.selectionSet, path: '$', fragStack: [] }], root!)) {
    fields.push(rootField(ctx, rs, root!, defs, f, opType));
  }
  if (opType === 'subscription' && fields.some((f) => f.kind === 'remote')) {
    throw new SvcError(400, 'not-supported', 'subscription to remote server is not supported', '$');
  }
  return { opType, ctx, fields };
}

function rootField(
  ctx: DocumentContext,
  rs: RoleSchema,
  root: GraphQLObjectType,
  defs: Record<string, GraphQLField<unknown, unknown>>,
  f: CollectedField,
  opType: OperationType,
): RootField {
  if (f.name === '__typename') return { alias: f.alias, kind: 'const', json: JSON.stringify(root.name) };
  if ((f.name === '__schema' || f.name === '__type') && opType !== 'mutation') {
    return { alias: f.alias, kind: 'const', json: JSON.stringify(introspectionRoot(ctx, f, rs.schema)) };
  }
  const def = defs[f.name];
  if (!def) throw fieldNotFound(f.name, root.name, f.path);
  checkLeaf(f, def.type);
  return svcExt<SelectionParser<RootField>>(def)(ctx, f, def);
}

/** root fields of one read statement (PostgreSQL allows 1664 output columns) */
export const MAX_ROOT_FIELDS = 1600;

export function compilePlan(rs: RoleSchema, op: Operation, vars: CoercedVariables, opts: SelectCompileOptions): QueryPlan {
  const { opType, ctx, fields } = operationRootFields(rs, op, vars);
  const r = rs.builder.cache.remote;
  const remote = r && (r.schemas.size > 0 || r.relationships.size > 0) ? planRemote(op.def, op.fragments, fields) : undefined;
  const cached = cachedDirective(op.def);
  if (opType === 'mutation') return { ...compileMutationPlan(ctx, fields, opts), remote };
  const dbFields = fields.filter((f) => f.kind !== 'const' && f.kind !== 'action' && f.kind !== 'remote');
  // one statement answers every root field, one output column each: PostgreSQL's limit of 1664
  // target-list entries (54011) would otherwise surface as an internal error
  if (dbFields.length > MAX_ROOT_FIELDS) {
    throw validationError(`a query may select at most ${MAX_ROOT_FIELDS} root fields; this one selects ${dbFields.length}: split it`, '$');
  }
  let col = 0;
  const planFields: PlanField[] = fields.map((f): PlanField => {
    if (f.kind === 'const') return { alias: f.alias, kind: 'const', json: f.json };
    if (f.kind === 'action') return { alias: f.alias, kind: 'action', field: f.action };
    if (f.kind === 'remote') return { alias: f.alias, kind: 'remote' };
    return { alias: f.alias, kind: 'db', column: col++, ir: f };
  });
  let response = responseTemplate(planFields);
  let statement: QueryPlan['statement'] = null;
  let sessionVars: string[] = [];
  let multiplexed: CompiledSql | undefined;
  if (dbFields.length > 0) {
    const whole = opType === 'query' && !remote && !fields.some((f) => f.kind === 'action') && wholeResponse(response);
    const root = whole ? rootResponseSql(dbFields[0]!, response!.texts[0]!, response!.texts[1]!, opts) : rootStatementSql(dbFields, opts);
    if (whole) response = { texts: ['', ''], columns: ['0'] };
    const compiled = compileSql(root);
    statement = { name: statementName(compiled.text), compiled };
    sessionVars = compiled.sessionVars;
    if (opType === 'subscription') multiplexed = compileSql(root, undefined, multiplexedParam);
  }
  return {
    opType,
    structural: ctx.structural,
    fields: planFields,
    statement,
    sessionVars,
    response,
    remote,
    ...(multiplexed ? { multiplexed } : {}),
    ...(cached ? { cachedDirective: { args: cached, text: normalisedQuery(op) } } : {}),
  };
}

/**
 * Whether PostgreSQL writes a query's whole response text (`rootResponseSql`): one database field
 * with at most a little constant text around it (`__typename`s; not an introspection's JSON).
 * The row's text is then the answer as it is sent: no string joined around it in JavaScript, which
 * V8 would copy whole into a new string the first time it is read (on every read of a 194 KB
 * answer, one more large-object string per request).
 */
function wholeResponse(r: QueryPlan['response']): boolean {
  return r !== undefined && r.columns.length === 1 && r.texts[0]!.length + r.texts[1]!.length <= 4096;
}

function responseTemplate(fields: PlanField[]): QueryPlan['response'] {
  const texts: string[] = [];
  const columns: string[] = [];
  let text = '{"data":{';
  fields.forEach((f, i) => {
    text += `${i > 0 ? ',' : ''}${JSON.stringify(f.alias)}:`;
    if (f.kind === 'db' || f.kind === 'remote') {
      texts.push(text);
      // remote values are put in the row under their response key (prefixed: never a column number)
      columns.push(f.kind === 'db' ? String(f.column) : `remote:${f.alias}`);
      text = '';
    } else {
      text += f.kind === 'const' ? f.json : 'null';
    }
  });
  texts.push(`${text}}}`);
  return { texts, columns };
}

function compileMutationPlan(ctx: DocumentContext, fields: RootField[], opts: SelectCompileOptions): QueryPlan {
  const sessionVars = new Set<string>();
  const planFields = fields.map((f): PlanField => {
    if (f.kind === 'const') return { alias: f.alias, kind: 'const', json: f.json };
    if (f.kind === 'action') return { alias: f.alias, kind: 'action', field: f.action };
    if (f.kind === 'remote') return { alias: f.alias, kind: 'remote' };
    if (f.kind !== 'mutation') throw new SvcError(500, 'unexpected', 'a query field in a mutation', '$');
    const c = compileMutation(f.mutation, f.output, opts);
    if (c.kind === 'constant') return { alias: f.alias, kind: 'const', json: c.json };
    const write = compileSql(c.write);
    const output = c.output ? compileSql(c.output) : null;
    for (const v of [...write.sessionVars, ...(output?.sessionVars ?? [])]) sessionVars.add(v);
    return { alias: f.alias, kind: 'mutation', plan: { write, output, raises: c.raises, errorPath: f.errorPath, name: statementName(write.text) }, ir: f };
  });
  return { opType: 'mutation', structural: ctx.structural, fields: planFields, statement: null, sessionVars: [...sessionVars] };
}

export function statementName(text: string): string {
  return `svc_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
}
