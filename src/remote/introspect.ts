/**
 * Remote schemas: resolving a definition (url or url_from_env, headers from values or the
 * environment, timeout) and fetching the server's introspection. The introspection result of each
 * remote is kept per process (`RemoteStore`), refetched only by add_remote_schema,
 * reload_remote_schema, reload_metadata with reload_remote_schemas, or when a rebuild meets a
 * remote this process has not fetched yet (start-up, another instance added it).
 */
import { getIntrospectionQuery, type IntrospectionQuery } from 'graphql';
import { SvcError } from '../errors.js';
import { BodyTooLargeError, describeFetchError, postLimited, USER_AGENT, type OutboundClient } from '../http/client.js';
import type { RemoteSchemaMetadata } from '../model/metadata.js';
import type { RemoteEndpoint } from '../model/remote.js';
import type { Queryable } from '../db/db.js';
import type { Span } from '../core/tracing.js';
import { clientSchemaError } from './buildCheck.js';
import { checkIntrospectionBounds, REMOTE_LIMITS, RemoteBoundError, responseTooDeep } from './bounds.js';
import { resolveHeaders } from '../env.js';

export interface RemoteIntrospection {
  /** JSON of the definition it was fetched for */
  key: string;
  endpoint: RemoteEndpoint;
  schema: IntrospectionQuery['__schema'];
}

export const DEFAULT_TIMEOUT_SECONDS = 60;
/** A response of a remote is read up to this size (an introspection: REMOTE_LIMITS.introspectionBytes). */
export const REMOTE_RESPONSE_MAX = REMOTE_LIMITS.responseBytes;

const remoteErr = (message: string, internal?: unknown) => new SvcError(400, 'remote-schema-error', message, '$', internal);

export function resolveEndpoint(rs: RemoteSchemaMetadata, env: NodeJS.ProcessEnv = process.env): RemoteEndpoint {
  const d = rs.definition;
  let url = d.url;
  if (url === undefined && d.url_from_env !== undefined) {
    url = env[d.url_from_env];
    if (url === undefined) throw new SvcError(400, 'invalid-params', `environment variable '${d.url_from_env}' not set`);
  }
  if (url === undefined) throw new SvcError(400, 'invalid-params', "both `url` and `url_from_env` can't be empty");
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new SvcError(400, 'invalid-params', `not a valid URI: ${url}`);
  }
  const headers = resolveHeaders(d.headers, env);
  return {
    name: rs.name,
    url,
    headers,
    forwardClientHeaders: d.forward_client_headers === true,
    timeoutMs: (d.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000,
  };
}

/** The identity of a definition: a changed definition is fetched again. */
export const definitionKey = (rs: RemoteSchemaMetadata): string => JSON.stringify(rs.definition);

const LARGE_BODY = 1024 * 1024;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** POSTs a GraphQL request to a remote; the parsed JSON body. Errors are `remote-schema-error`s. */
export async function postGraphQL(
  client: OutboundClient,
  ep: RemoteEndpoint,
  headers: Record<string, string>,
  body: string,
  maxBytes: number = REMOTE_RESPONSE_MAX,
  parent?: Span,
): Promise<{ status: number; json: unknown; headers: Headers; bytes: number; text: string }> {
  let res;
  try {
    res = await postLimited(ep.url, { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...headers }, body, {
      client,
      timeoutMs: ep.timeoutMs,
      maxBytes,
      target: 'remote_schema',
      parent,
    });
  } catch (e) {
    if (e instanceof BodyTooLargeError) throw remoteErr(`the response of remote server ${ep.url} is larger than ${maxBytes} bytes`);
    throw remoteErr(`HTTP exception occurred while sending the request to ${ep.url}`, { error: describeFetchError(e) });
  }
  const text = res.body.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    if (res.status !== 200) throw remoteErr(`non-200 (${res.status}) response from remote server`, { response: text.slice(0, 1000) });
    throw remoteErr('Error in $: Failed reading: not a valid json value', { response: text.slice(0, 1000) });
  }
  // a large body's parse is one long step: let other requests in before the next (issue 30 item 9)
  if (text.length > LARGE_BODY) await yieldToEventLoop();
  if (responseTooDeep(json)) throw remoteErr(`the response of remote server ${ep.url} is nested deeper than ${REMOTE_LIMITS.responseDepth} levels`);
  if (text.length > LARGE_BODY) await yieldToEventLoop();
  return { status: res.status, json, headers: res.headers, bytes: res.body.length, text };
}

/** Fetches and checks a remote's introspection (`add_remote_schema` errors as upstream); `parent`: the /v1/query span (tracing on). */
export async function fetchIntrospection(client: OutboundClient, rs: RemoteSchemaMetadata, parent?: Span): Promise<RemoteIntrospection> {
  const endpoint = resolveEndpoint(rs);
  const hdrs: Record<string, string> = {};
  for (const h of endpoint.headers) hdrs[h.name] = h.value;
  const { status, json, bytes, text } = await postGraphQL(
    client,
    endpoint,
    hdrs,
    JSON.stringify({ query: getIntrospectionQuery() }),
    REMOTE_LIMITS.introspectionBytes,
    parent,
  );
  if (status !== 200) throw remoteErr(`non-200 (${status}) response from remote server`, json);
  const data = (json as { data?: { __schema?: unknown } } | null)?.data;
  if (!data || typeof data !== 'object' || !data.__schema || typeof data.__schema !== 'object') {
    const errors = (json as { errors?: unknown } | null)?.errors;
    throw remoteErr(errors ? 'introspection query to remote server failed' : 'Error in $: key "data" not found', errors ?? json);
  }
  const schema = data.__schema as IntrospectionQuery['__schema'];
  checkIntrospectionShape(schema);
  try {
    checkIntrospectionBounds(schema, bytes);
  } catch (e) {
    if (e instanceof RemoteBoundError) throw remoteErr(`remote schema ${JSON.stringify(rs.name)} is not accepted: ${e.message}`);
    throw e;
  }
  if (text.length > LARGE_BODY) await yieldToEventLoop();
  checkInterfacesAndUnions(schema);
  // what graphql-js cannot build, the role schemas could not either: refused here, not at every
  // request (a large schema is built off the main thread: src/remote/buildCheck.ts)
  const invalid = await clientSchemaError(schema, text);
  if (invalid !== null) throw remoteErr(`remote schema ${JSON.stringify(rs.name)} is not a valid GraphQL schema: ${invalid}`);
  return { key: definitionKey(rs), endpoint, schema };
}

/** The parts of the introspection the engine reads, checked with aeson-like messages. */
function checkIntrospectionShape(s: IntrospectionQuery['__schema']): void {
  if (!Array.isArray(s.types)) throw remoteErr('Error in $.types: expected Array');
  if (!s.queryType || typeof s.queryType.name !== 'string') throw remoteErr('Error in $.queryType: parsing Text failed');
  s.types.forEach((t, i) => {
    if (!t || typeof t.name !== 'string')
      throw remoteErr(`Error in $.types[${i}].name: parsing Text failed, expected String, but encountered ${t ? kind(t.name) : 'Null'}`);
    const pt = (t as { possibleTypes?: Array<{ name?: unknown }> | null }).possibleTypes;
    if (t.kind === 'UNION' && Array.isArray(pt)) {
      pt.forEach((p, j) => {
        if (typeof p?.name !== 'string')
          throw remoteErr(`Error in $.types[${i}].possibleTypes[${j}].name: parsing Text failed, expected String, but encountered ${kind(p?.name)}`);
      });
    }
  });
}

type TypeRef = { kind: string; name?: string | null; ofType?: TypeRef | null };

function refText(t: TypeRef): string {
  if (t.kind === 'NON_NULL') return `${refText(t.ofType!)}!`;
  if (t.kind === 'LIST') return `[${refText(t.ofType!)}]`;
  return t.name ?? '';
}

/**
 * The interface and union rules of the GraphQL spec (3.1.3, 3.1.4) on a remote's types, with
 * upstream's messages: an engine stitching a broken schema would answer wrongly later.
 */
function checkInterfacesAndUnions(s: IntrospectionQuery['__schema']): void {
  const types = new Map(s.types.map((t) => [t.name, t]));
  type Fielded = { name: string; fields: Array<{ name: string; type: TypeRef; args: Array<{ name: string; type: TypeRef }> }> };
  const implementsIface = (obj: string, iface: string): boolean => {
    const t = types.get(obj) as { interfaces?: Array<{ name: string }> } | undefined;
    return !!t?.interfaces?.some((i) => i.name === iface);
  };
  // is `sub` the same type as `sup` or a subtype of it (non-null of, implementing, member of)?
  const isSubtype = (sub: TypeRef, sup: TypeRef): boolean => {
    if (sup.kind === 'NON_NULL') return sub.kind === 'NON_NULL' && isSubtype(sub.ofType!, sup.ofType!);
    if (sub.kind === 'NON_NULL') return isSubtype(sub.ofType!, sup);
    if (sup.kind === 'LIST') return sub.kind === 'LIST' && isSubtype(sub.ofType!, sup.ofType!);
    if (sub.kind === 'LIST') return false;
    if (sub.name === sup.name) return true;
    const supT = types.get(sup.name ?? '');
    if (supT?.kind === 'INTERFACE') return implementsIface(sub.name ?? '', sup.name!);
    if (supT?.kind === 'UNION') return supT.possibleTypes.some((p) => p.name === sub.name);
    return false;
  };
  for (const t of s.types) {
    if (t.kind === 'INTERFACE' && (!t.fields || t.fields.length === 0)) throw remoteErr(`List of fields cannot be empty for interface '${t.name}'`);
    if (t.kind === 'UNION') {
      if (!t.possibleTypes || t.possibleTypes.length === 0) throw remoteErr(`List of member types cannot be empty for union type '${t.name}'`);
      for (const p of t.possibleTypes ?? []) {
        const m = types.get(p.name);
        if (!m) throw remoteErr(`Could not find type '${p.name}', which is defined as a member type of Union '${t.name}'`);
        if (m.kind !== 'OBJECT') throw remoteErr(`Union type '${t.name}' can only include object types. It cannot include '${p.name}'`);
      }
    }
    if (t.kind !== 'OBJECT') continue;
    const obj = t as unknown as Fielded;
    for (const i of t.interfaces ?? []) {
      const iface = types.get(i.name);
      if (!iface || iface.kind !== 'INTERFACE') throw remoteErr(`Could not find interface '${i.name}' implemented by Object type '${t.name}'`);
      for (const f of (iface as unknown as Fielded).fields ?? []) {
        const of = obj.fields.find((x) => x.name === f.name);
        if (!of) throw remoteErr(`Interface field '${iface.name}'.${JSON.stringify(f.name)} expected, but '${t.name}' does not provide it`);
        if (!isSubtype(of.type, f.type)) {
          throw remoteErr(
            `The type of Object field '${t.name}'.${JSON.stringify(of.name)} (${refText(of.type)}) is not the same type/sub type of Interface field '${iface.name}'.${JSON.stringify(f.name)} (${refText(f.type)})`,
          );
        }
        for (const a of f.args) {
          const oa = of.args.find((x) => x.name === a.name);
          if (!oa)
            throw remoteErr(
              `Interface field argument '${iface.name}'.${JSON.stringify(f.name)}(${JSON.stringify(a.name)}:) required, but Object field '${t.name}'.${JSON.stringify(of.name)} does not provide it`,
            );
          if (refText(oa.type) !== refText(a.type)) {
            throw remoteErr(
              `Interface field argument '${iface.name}'.${JSON.stringify(f.name)}(${JSON.stringify(a.name)}:) expects type ${refText(a.type)}, but '${t.name}'.${JSON.stringify(of.name)}(${JSON.stringify(oa.name)}:) has type ${refText(oa.type)}`,
            );
          }
        }
        for (const oa of of.args) {
          if (oa.type.kind === 'NON_NULL' && !f.args.some((a) => a.name === oa.name)) {
            throw remoteErr(
              `Object field argument '${t.name}'.${JSON.stringify(of.name)}(${JSON.stringify(oa.name)}:) is of required type ${refText(oa.type)}, but is not provided by Interface field '${iface.name}'.${JSON.stringify(f.name)}`,
            );
          }
        }
      }
    }
  }
}

function kind(v: unknown): string {
  if (v === null || v === undefined) return 'Null';
  if (Array.isArray(v)) return 'Array';
  if (typeof v === 'object') return 'Object';
  if (typeof v === 'number') return 'Number';
  if (typeof v === 'boolean') return 'Boolean';
  return 'String';
}

/**
 * Introspections an engine fetched (one store per engine, src/engine.ts), by remote name, each for a definition and a generation (the
 * catalog's `remote_schema_generations`, bumped by add/reload on any instance). A failed fetch is
 * remembered too: the remote stays inconsistent (and rebuilds do not wait on it again) until its
 * definition or generation changes.
 */
export class RemoteStore {
  /** `client`: the engine's outbound client, the introspections' fetches go through it */
  constructor(private readonly client: OutboundClient) {}

  private readonly byName = new Map<string, RemoteIntrospection | { key: string; error: Error }>();

  private static key(rs: RemoteSchemaMetadata, generation: number): string {
    return `${generation}:${definitionKey(rs)}`;
  }

  set(rs: RemoteSchemaMetadata, r: RemoteIntrospection, generation: number): void {
    this.byName.set(rs.name, { ...r, key: RemoteStore.key(rs, generation) });
  }

  /** Forget one remote (or all): the next rebuild fetches it again. */
  invalidate(name?: string): void {
    if (name === undefined) this.byName.clear();
    else this.byName.delete(name);
  }

  /** The cached introspection, or a fresh one (start-up, reload, another instance added or reloaded the remote). */
  async load(rs: RemoteSchemaMetadata, generation = 0): Promise<RemoteIntrospection> {
    const key = RemoteStore.key(rs, generation);
    const hit = this.byName.get(rs.name);
    if (hit && hit.key === key) {
      if ('error' in hit) throw hit.error;
      return hit;
    }
    try {
      const fresh = await fetchIntrospection(this.client, rs);
      this.set(rs, fresh, generation);
      return fresh;
    } catch (e) {
      this.byName.set(rs.name, { key, error: e instanceof Error ? e : new Error(String(e)) });
      throw e;
    }
  }
}

/** The generations of the remotes (absent: 0). */
export async function loadRemoteGenerations(q: Queryable): Promise<Map<string, number>> {
  const r = await q.query('select name, generation from svc_catalog.remote_schema_generations');
  return new Map((r.rows as Array<{ name: string; generation: unknown }>).map((x) => [x.name, Number(x.generation)]));
}

/** Bumps the generation of the named remotes (all when `names` is undefined); the new generations. */
export async function bumpRemoteGenerations(q: Queryable, names: string[]): Promise<Map<string, number>> {
  if (names.length === 0) return new Map();
  const r = await q.query(
    `insert into svc_catalog.remote_schema_generations (name, generation) select n, 1 from unnest($1::text[]) as n
     on conflict (name) do update set generation = svc_catalog.remote_schema_generations.generation + 1
     returning name, generation`,
    [names],
  );
  return new Map((r.rows as Array<{ name: string; generation: unknown }>).map((x) => [x.name, Number(x.generation)]));
}
