/**
 * Executing the remote part of a plan: one HTTP request per remote schema for its root fields, and
 * one request per remote schema for every remote relationship of the request (all parent rows of
 * all join sites as aliases of one document), never one per row.
 */
import { Kind, parseValue, print, type ArgumentNode, type IntrospectionInputTypeRef, type ObjectFieldNode, type ValueNode } from 'graphql';
import { SvcError } from '../errors.js';
import { BodyTooLargeError, describeFetchError, postLimited, USER_AGENT } from '../http/client.js';
import { REMOTE_LIMITS, responseTooDeep } from './bounds.js';
import { isAdminSecretHeader } from '../http/credentials.js';
import { isForwardableHeader } from '../http/forwarded.js';
import { collectSetCookies } from '../http/responseHeaders.js';
import type { ExecContext } from '../execute/interface.js';
import { REMOTE_RESPONSE_MAX } from './introspect.js';
import type { RemoteEndpoint, RemoteRelationshipModel, RemoteSchemaModel } from '../model/remote.js';
import { documentText, type JoinSite, type JoinWalker, type RemotePlan } from '../execute/remotePlan.js';
import { isJsonObject, jsonText, parseJsonExact } from '../json.js';

/** Headers of a request to a remote: client headers (when configured) < session variables < configured headers. */
export function remoteHeaders(ctx: ExecContext, ep: RemoteEndpoint): Record<string, string> {
  const h: Record<string, string> = {};
  if (ep.forwardClientHeaders) {
    for (const [k, v] of Object.entries(ctx.headers)) {
      const name = k.toLowerCase();
      // the one list of headers never forwarded (src/http/forwarded.ts); session variables come below
      if (v === undefined || !isForwardableHeader(name) || name.startsWith('x-svc-')) continue;
      h[name] = Array.isArray(v) ? v.join(', ') : v;
    }
  }
  for (const [k, v] of Object.entries(ctx.session.vars)) if (k.startsWith('x-svc-') && !isAdminSecretHeader(k)) h[k] = String(v);
  h['x-svc-role'] = ctx.session.role;
  for (const c of ep.headers) h[c.name.toLowerCase()] = c.value;
  return h;
}

interface GraphQLResponse {
  data?: Record<string, unknown> | null;
  errors?: unknown[];
}

/** POSTs one document; HTTP failures are `unexpected` errors of the whole request (as upstream). */
async function send(ctx: ExecContext, m: RemoteSchemaModel, query: string, variables: Record<string, unknown> | undefined): Promise<GraphQLResponse> {
  const ep = m.endpoint;
  const body = jsonText(variables && Object.keys(variables).length ? { query, variables } : { query });
  let res;
  try {
    res = await postLimited(ep.url, { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...remoteHeaders(ctx, ep) }, body, {
      client: ctx.outbound,
      timeoutMs: ep.timeoutMs,
      maxBytes: REMOTE_RESPONSE_MAX,
      target: 'remote_schema',
      parent: ctx.span,
    });
  } catch (e) {
    if (e instanceof Error && e.name === 'TimeoutError') throw new SvcError(400, 'unexpected', 'ResponseTimeout', '$');
    if (e instanceof BodyTooLargeError)
      throw new SvcError(400, 'unexpected', `the response of remote server ${JSON.stringify(m.name)} is larger than ${REMOTE_RESPONSE_MAX} bytes`, '$');
    throw new SvcError(400, 'unexpected', `HTTP exception occurred while sending the request to ${ep.url}`, '$', { error: describeFetchError(e) });
  }
  // the remote's cookies reach the client, as upstream
  collectSetCookies(ctx.headers, res.rawHeaders);
  let json: unknown;
  try {
    json = parseJsonExact(res.body.toString('utf8'));
  } catch {
    throw new SvcError(400, 'unexpected', `non-JSON (${res.status}) response from remote server ${JSON.stringify(m.name)}`, '$', {
      response: res.body.toString('utf8').slice(0, 1000),
    });
  }
  if (responseTooDeep(json)) {
    throw new SvcError(
      400,
      'unexpected',
      `the response of remote server ${JSON.stringify(m.name)} is nested deeper than ${REMOTE_LIMITS.responseDepth} levels`,
      '$',
    );
  }
  if (!isJsonObject(json) || (!('data' in json) && !('errors' in json))) {
    throw new SvcError(400, 'unexpected', `invalid response (${res.status}) from remote server ${JSON.stringify(m.name)}`, '$', { response: json });
  }
  return json as GraphQLResponse;
}

const pick = (variables: Record<string, unknown>, names: string[]) => {
  const out: Record<string, unknown> = {};
  for (const n of names) if (n in variables) out[n] = variables[n];
  return out;
};

function remoteOf(ctx: ExecContext, name: string): RemoteSchemaModel {
  const m = ctx.cache.remote?.schemas.get(name);
  if (!m) throw new SvcError(400, 'unexpected', `remote schema ${JSON.stringify(name)} is not available`, '$');
  return m;
}

/** The remote root fields' values (JSON text by response key) and the remotes' errors, as they came. */
export async function executeRemoteRoots(
  ctx: ExecContext,
  plan: RemotePlan,
  variables: Record<string, unknown>,
): Promise<{ values: Map<string, string>; errors: unknown[] }> {
  const values = new Map<string, string>();
  const errors: unknown[] = [];
  const answers = await Promise.all(plan.roots.map((g) => send(ctx, remoteOf(ctx, g.remote), g.query, pick(variables, g.variables))));
  plan.roots.forEach((g, i) => {
    const r = answers[i]!;
    for (const a of g.aliases) values.set(a, jsonText(r.data?.[a] ?? null));
    if (Array.isArray(r.errors)) errors.push(...r.errors);
  });
  return { values, errors };
}

// ---- remote relationships ------------------------------------------------------------

/** A parent row's field to fill: the object and key, and the join values the statement output. */
interface Hole {
  obj: Record<string, unknown>;
  key: string;
  values: unknown[];
}

function collectHoles(v: unknown, w: JoinWalker, out: Map<JoinSite, Hole[]>): void {
  if (v === null || v === undefined) return;
  const objs = w.kind === 'rows' ? (Array.isArray(v) ? v : []) : [v];
  for (const o of objs) {
    if (!o || typeof o !== 'object') continue;
    const row = o as Record<string, unknown>;
    for (const s of w.fields) {
      if ('site' in s) {
        const list = out.get(s.site) ?? [];
        list.push({ obj: row, key: s.key, values: Array.isArray(row[s.key]) ? (row[s.key] as unknown[]) : [] });
        out.set(s.site, list);
      } else collectHoles(row[s.key], s.walker, out);
    }
  }
}

const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** A JSON value as a GraphQL literal of `type` (enum values bare, input objects field by field). */
export function graphqlLiteral(v: unknown, type: IntrospectionInputTypeRef | undefined, m: RemoteSchemaModel): string {
  if (v === null || v === undefined) return 'null';
  if (type && type.kind === 'NON_NULL') return graphqlLiteral(v, type.ofType, m);
  if (type && type.kind === 'LIST') {
    return Array.isArray(v) ? `[${v.map((x) => graphqlLiteral(x, type.ofType, m)).join(', ')}]` : graphqlLiteral(v, type.ofType, m);
  }
  const named = type ? m.types.get(type.name) : undefined;
  if (Array.isArray(v)) return `[${v.map((x) => graphqlLiteral(x, undefined, m)).join(', ')}]`;
  if (isJsonObject(v)) {
    const fields = named?.kind === 'INPUT_OBJECT' ? named.inputFields : [];
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => {
        // keys come from data (a json column as a join value): never spliced unless a GraphQL name
        if (!GRAPHQL_NAME.test(k)) throw new SvcError(400, 'unexpected', `${JSON.stringify(k)} is not a valid GraphQL name for a remote argument`, '$');
        return `${k}: ${graphqlLiteral(x, fields.find((f) => f.name === k)?.type, m)}`;
      })
      .join(', ')}}`;
  }
  // an enum value is written bare only when it is a name (else the remote refuses the string)
  if (named?.kind === 'ENUM' && typeof v === 'string' && GRAPHQL_NAME.test(v)) return v;
  return jsonText(v);
}

/** The configured arguments with `$column` references replaced by the row's values. */
function substitute(args: unknown, row: Map<string, unknown>): unknown {
  if (typeof args === 'string' && args.startsWith('$')) return row.get(args.slice(1)) ?? null;
  if (Array.isArray(args)) return args.map((x) => substitute(x, row));
  if (args && typeof args === 'object') return Object.fromEntries(Object.entries(args).map(([k, x]) => [k, substitute(x, row)]));
  return args;
}

/** Two argument values as one: object fields of both (the configured ones merged into the client's), else the configured value. */
function mergeValues(client: ValueNode, configured: ValueNode): ValueNode {
  if (client.kind !== Kind.OBJECT || configured.kind !== Kind.OBJECT) return configured;
  const fields: ObjectFieldNode[] = client.fields.map((f) => {
    const c = configured.fields.find((x) => x.name.value === f.name.value);
    return c ? { ...f, value: mergeValues(f.value, c.value) } : f;
  });
  for (const c of configured.fields) if (!client.fields.some((f) => f.name.value === c.name.value)) fields.push(c);
  return { kind: Kind.OBJECT, fields };
}

/** The configured arguments of a path step (values substituted), with the client's arguments merged in at the leaf. */
function argsText(
  args: Record<string, unknown>,
  defs: RemoteRelationshipModel['path'][number]['def']['args'],
  m: RemoteSchemaModel,
  client: readonly ArgumentNode[],
): string {
  const out: string[] = [];
  for (const [k, x] of Object.entries(args)) {
    const text = graphqlLiteral(x, defs.find((a) => a.name === k)?.type, m);
    const given = client.find((a) => a.name.value === k);
    out.push(`${k}: ${given ? print(mergeValues(given.value, parseValue(text))) : text}`);
  }
  for (const a of client) if (!(a.name.value in args)) out.push(print(a));
  return out.join(', ');
}

/** The aliased field of one distinct set of join values: the path with its arguments, the client's selection at the leaf. */
function joinField(alias: string, site: JoinSite, values: unknown[], m: RemoteSchemaModel): string {
  const rel = site.join.rel;
  const row = new Map(rel.columns.map((c, i) => [c.name, values[i]]));
  let text = '';
  rel.path.forEach((step, i) => {
    const last = i === rel.path.length - 1;
    const a = argsText(substitute(step.args, row) as Record<string, unknown>, step.def.args, m, last ? site.leafArgs : []);
    text += `${i === 0 ? `${alias}: ` : ' { '}${step.field}${a ? `(${a})` : ''}`;
  });
  text += site.selection ? ` ${site.selection}` : '';
  text += ' }'.repeat(rel.path.length - 1);
  return text;
}

/** The remote's answer for an alias, followed down the relationship's path (mapping over lists). */
function followPath(v: unknown, rel: RemoteRelationshipModel): unknown {
  let cur = v;
  for (let i = 1; i < rel.path.length; i++) {
    const key = rel.path[i]!.field;
    const step = (x: unknown): unknown => {
      if (x === null || x === undefined) return null;
      if (Array.isArray(x)) return x.map(step);
      return (x as Record<string, unknown>)[key] ?? null;
    };
    cur = step(cur);
  }
  return cur ?? null;
}

/**
 * Fills the remote relationship fields of the database root fields (`texts`: alias → JSON text).
 * Every join site's distinct parent values become aliases of one document per remote schema.
 */
export async function resolveJoins(
  ctx: ExecContext,
  plan: RemotePlan,
  texts: Map<string, string>,
  variables: Record<string, unknown>,
): Promise<Map<string, string>> {
  const parsed = new Map<string, unknown>();
  const holes = new Map<JoinSite, Hole[]>();
  for (const [alias, walker] of plan.joins) {
    const text = texts.get(alias);
    if (text === undefined) continue;
    // numbers exact: a bigint join value past 2^53 is sent as it is, and keys the alias below
    const v = parseJsonExact(text);
    parsed.set(alias, v);
    collectHoles(v, walker, holes);
  }
  // per remote: the fields of every site, one alias per distinct join value
  const byRemote = new Map<string, { fields: string[]; variables: Set<string>; fill: Array<() => void>; data?: Record<string, unknown> | null }>();
  let n = 0;
  for (const [site, hs] of holes) {
    if (hs.length === 0) continue;
    const m = remoteOf(ctx, site.join.rel.remote);
    const req = byRemote.get(m.name) ?? { fields: [], variables: new Set<string>(), fill: [] };
    byRemote.set(m.name, req);
    for (const v of site.variables) req.variables.add(v);
    const aliasOf = new Map<string, string>();
    for (const h of hs) {
      const key = jsonText(h.values);
      let alias = aliasOf.get(key);
      if (!alias) {
        alias = `${site.join.rel.name}__${n++}`;
        aliasOf.set(key, alias);
        req.fields.push(joinField(alias, site, h.values, m));
      }
      const a = alias;
      req.fill.push(() => {
        h.obj[h.key] = followPath(req.data?.[a] ?? null, site.join.rel);
      });
    }
  }
  await Promise.all(
    [...byRemote].map(async ([name, req]) => {
      const vars = [...req.variables];
      const doc = documentText('query', plan.variableDefs, vars, req.fields.join(' '));
      const r = await send(ctx, remoteOf(ctx, name), doc, pick(variables, vars));
      if (Array.isArray(r.errors) && r.errors.length) {
        throw new SvcError(400, 'unexpected', 'Errors from remote server', '$', { errors: r.errors });
      }
      req.data = r.data ?? null;
    }),
  );
  for (const req of byRemote.values()) for (const f of req.fill) f();
  const out = new Map<string, string>();
  for (const [alias, v] of parsed) out.set(alias, jsonText(v));
  return out;
}
