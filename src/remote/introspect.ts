/**
 * Remote schemas: resolving a definition (url or url_from_env, headers from values or the
 * environment, timeout) and fetching the server's introspection. The introspection result of each
 * remote is kept per process (`RemoteStore`), refetched only by add_remote_schema,
 * reload_remote_schema, reload_metadata with reload_remote_schemas, or when a rebuild meets a
 * remote this process has not fetched yet (start-up, another instance added it).
 */
import { getIntrospectionQuery, type IntrospectionQuery } from 'graphql';
import { SvcError } from '../errors.js';
import { describeFetchError, postLimited, USER_AGENT } from '../http/client.js';
import type { RemoteSchemaMetadata } from '../metadata/types.js';

/** A remote schema's definition with URL and headers resolved. */
export interface RemoteEndpoint {
  name: string;
  url: string;
  headers: Array<{ name: string; value: string }>;
  forwardClientHeaders: boolean;
  timeoutMs: number;
}

export interface RemoteIntrospection {
  /** JSON of the definition it was fetched for */
  key: string;
  endpoint: RemoteEndpoint;
  schema: IntrospectionQuery['__schema'];
}

export const DEFAULT_TIMEOUT_SECONDS = 60;
/** An introspection or a response of a remote is read up to this size. */
export const REMOTE_RESPONSE_MAX = 64 * 1024 * 1024;

const remoteErr = (message: string, internal?: unknown) => new SvcError(400, 'remote-schema-error', message, '$', internal);

export function resolveEndpoint(rs: RemoteSchemaMetadata, env: NodeJS.ProcessEnv = process.env): RemoteEndpoint {
  const d = rs.definition;
  let url = d.url;
  if (url === undefined && d.url_from_env !== undefined) {
    url = env[d.url_from_env];
    if (url === undefined) throw new SvcError(400, 'invalid-params', `environment variable '${d.url_from_env}' not set`);
  }
  if (url === undefined) throw new SvcError(400, 'invalid-params', 'both `url` and `url_from_env` can\'t be empty');
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new SvcError(400, 'invalid-params', `not a valid URI: ${url}`);
  }
  const headers = (d.headers ?? []).map((h) => {
    if (h.value !== undefined) return { name: h.name, value: h.value };
    const v = env[h.value_from_env!];
    if (v === undefined) throw new SvcError(400, 'not-exists', `environment variable "${h.value_from_env}" not set`);
    return { name: h.name, value: v };
  });
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

/** POSTs a GraphQL request to a remote; the parsed JSON body. Errors are `remote-schema-error`s. */
export async function postGraphQL(
  ep: RemoteEndpoint,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; json: unknown; headers: Headers }> {
  let res;
  try {
    res = await postLimited(ep.url, { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...headers }, body, { timeoutMs: ep.timeoutMs, maxBytes: REMOTE_RESPONSE_MAX });
  } catch (e) {
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
  return { status: res.status, json, headers: res.headers };
}

/** Fetches and checks a remote's introspection (`add_remote_schema` errors as upstream). */
export async function fetchIntrospection(rs: RemoteSchemaMetadata): Promise<RemoteIntrospection> {
  const endpoint = resolveEndpoint(rs);
  const hdrs: Record<string, string> = {};
  for (const h of endpoint.headers) hdrs[h.name] = h.value;
  const { status, json } = await postGraphQL(endpoint, hdrs, JSON.stringify({ query: getIntrospectionQuery() }));
  if (status !== 200) throw remoteErr(`non-200 (${status}) response from remote server`, json);
  const data = (json as { data?: { __schema?: unknown } } | null)?.data;
  if (!data || typeof data !== 'object' || !data.__schema || typeof data.__schema !== 'object') {
    const errors = (json as { errors?: unknown } | null)?.errors;
    throw remoteErr(errors ? 'introspection query to remote server failed' : 'Error in $: key "data" not found', errors ?? json);
  }
  const schema = data.__schema as IntrospectionQuery['__schema'];
  checkIntrospectionShape(schema);
  return { key: definitionKey(rs), endpoint, schema };
}

/** The parts of the introspection the engine reads, checked with aeson-like messages. */
function checkIntrospectionShape(s: IntrospectionQuery['__schema']): void {
  if (!Array.isArray(s.types)) throw remoteErr('Error in $.types: expected Array');
  if (!s.queryType || typeof s.queryType.name !== 'string') throw remoteErr('Error in $.queryType: parsing Text failed');
  s.types.forEach((t, i) => {
    if (!t || typeof t.name !== 'string') throw remoteErr(`Error in $.types[${i}].name: parsing Text failed, expected String, but encountered ${t ? kind(t.name) : 'Null'}`);
    const pt = (t as { possibleTypes?: Array<{ name?: unknown }> | null }).possibleTypes;
    if (t.kind === 'UNION' && Array.isArray(pt)) {
      pt.forEach((p, j) => {
        if (typeof p?.name !== 'string') throw remoteErr(`Error in $.types[${i}].possibleTypes[${j}].name: parsing Text failed, expected String, but encountered ${kind(p?.name)}`);
      });
    }
  });
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
 * Introspections this process fetched, by remote name. A failed fetch is remembered too: the remote
 * stays inconsistent (and rebuilds do not wait on it again) until it is reloaded.
 */
export class RemoteStore {
  private readonly byName = new Map<string, RemoteIntrospection | { key: string; error: Error }>();

  set(name: string, r: RemoteIntrospection): void {
    this.byName.set(name, r);
  }

  /** Forget one remote (or all): the next rebuild fetches it again. */
  invalidate(name?: string): void {
    if (name === undefined) this.byName.clear();
    else this.byName.delete(name);
  }

  /** The cached introspection, or a fresh one (start-up, reload, another instance added the remote). */
  async load(rs: RemoteSchemaMetadata): Promise<RemoteIntrospection> {
    const hit = this.byName.get(rs.name);
    if (hit && hit.key === definitionKey(rs)) {
      if ('error' in hit) throw hit.error;
      return hit;
    }
    try {
      const fresh = await fetchIntrospection(rs);
      this.set(rs.name, fresh);
      return fresh;
    } catch (e) {
      this.byName.set(rs.name, { key: definitionKey(rs), error: e instanceof Error ? e : new Error(String(e)) });
      throw e;
    }
  }
}

/** One store per process: every engine in it sees the same remotes (tests run several engines). */
export const remoteStore = new RemoteStore();
