/**
 * REST endpoints (Hasura v2's RESTified endpoints, `create_rest_endpoint`): a URL template over a
 * query of a query collection. Resolved once per schema build: each endpoint's template is checked
 * (upstream's rules in RQL/DDL/Schema/Cache.hs: no empty segment or unnamed variable, no variable
 * twice, no two endpoints that can match one request with one method), its query looked up in its
 * collection and parsed (exactly one operation, not a subscription); a failing endpoint becomes an
 * inconsistent object (`in endpoint "e": …`) and is not served. The router matches a request's path
 * segments against the consistent endpoints: upstream's MatchResult (found, wrong method → the
 * allowed methods, not found).
 */
import { Kind, parse, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import type { InconsistentObject } from '../model/tables.js';
import type { Metadata, RestEndpointMetadata } from '../model/metadata.js';

export const REST_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;
export type RestMethod = (typeof REST_METHODS)[number];

/** one segment of a URL template: a literal, or `:name` (a variable) */
export type Segment = { literal: string } | { variable: string };

export interface RestEndpoint {
  name: string;
  /** the template as stored (`authors/:id`) */
  url: string;
  segments: Segment[];
  methods: Set<RestMethod>;
  /** the query's text, as sent to the GraphQL pipeline (one plan-cache entry per endpoint) */
  query: string;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  comment: string | null;
  meta: RestEndpointMetadata;
}

export type RestMatch =
  { kind: 'found'; endpoint: RestEndpoint; params: Record<string, string> } | { kind: 'method'; allowed: RestMethod[] } | { kind: 'none' };

export interface RestRouter {
  /** consistent endpoints, in metadata order */
  endpoints: RestEndpoint[];
  /** endpoints by their number of segments */
  bySize: Map<number, RestEndpoint[]>;
}

export function splitTemplate(url: string): Segment[] {
  return url.split('/').map((s) => (s.startsWith(':') ? { variable: s.slice(1) } : { literal: s }));
}

/** Can two templates of equal length match one path? (A variable matches any segment; upstream's ambiguousPaths.) */
function overlap(a: Segment[], b: Segment[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if ('literal' in x && 'literal' in y && x.literal !== y.literal) return false;
  }
  return true;
}

/** The variables a template names, without the `:` */
export const templateVariables = (segments: Segment[]): string[] => segments.flatMap((s) => ('variable' in s ? [s.variable] : []));

/** Resolves the metadata's endpoints; failures are pushed to `inconsistent`. */
export function resolveRestEndpoints(md: Metadata, inconsistent: InconsistentObject[]): RestRouter {
  const ok: RestEndpoint[] = [];
  const bad = (e: RestEndpointMetadata, reason: string) => inconsistent.push({ definition: e, reason, type: 'endpoint' });
  for (const e of md.rest_endpoints) {
    const ctx = `in endpoint ${JSON.stringify(e.name)}: `;
    const segments = splitTemplate(e.url);
    // reasons worded as upstream's imReason
    if (segments.some((s) => ('literal' in s ? s.literal === '' : s.variable === ''))) {
      bad(e, `Empty segments or unnamed variables are not allowed: ${e.url}`);
      continue;
    }
    if (/[?#\s%]/.test(e.url)) {
      bad(e, `${ctx}the URL template may contain neither "?", "#", "%" nor whitespace: ${e.url}`);
      continue;
    }
    const vars = templateVariables(segments);
    if (new Set(vars).size !== vars.length) {
      bad(e, `Duplicate variables found in endpoint path: ${e.url}`);
      continue;
    }
    const { collection_name: cname, query_name: qname } = e.definition.query;
    const collection = md.query_collections.find((c) => c.name === cname);
    if (!collection) {
      bad(e, `${ctx}collection with name ${cname} does not exist`);
      continue;
    }
    const listed = collection.definition.queries.find((q) => q.name === qname);
    if (!listed) {
      bad(e, `${ctx}query with name ${qname} does not exist in collection ${cname}`);
      continue;
    }
    let document: DocumentNode;
    try {
      document = parse(listed.query, { noLocation: true });
    } catch (err) {
      bad(e, `${ctx}query with name ${qname} is not a valid GraphQL document: ${(err as Error).message}`);
      continue;
    }
    const ops = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    if (ops.length === 0) {
      bad(e, `${ctx}query with name ${qname} has no definitions.`);
      continue;
    }
    if (ops.length > 1) {
      bad(e, `${ctx}query with name ${qname} has multiple definitions.`);
      continue;
    }
    const operation = ops[0]!;
    if (operation.operation === 'subscription') {
      bad(e, `${ctx}query with name ${qname} is a subscription`);
      continue;
    }
    // GET must not write (as GraphQL over HTTP: a mutation over GET is refused)
    if (operation.operation === 'mutation' && e.methods.includes('GET')) {
      bad(e, `${ctx}query with name ${qname} is a mutation, which cannot be served with GET`);
      continue;
    }
    const declared = new Set((operation.variableDefinitions ?? []).map((d) => d.variable.name.value));
    const undeclared = vars.filter((v) => !declared.has(v));
    if (undeclared.length) {
      bad(e, `${ctx}the URL template's variable ${JSON.stringify(undeclared[0])} is not a variable of query ${qname}`);
      continue;
    }
    const clash = ok.find((o) => overlap(o.segments, segments) && e.methods.some((m) => o.methods.has(m as RestMethod)));
    if (clash) {
      bad(e, `Ambiguous URL paths: ${clash.url}, ${e.url}`);
      continue;
    }
    ok.push({
      name: e.name,
      url: e.url,
      segments,
      methods: new Set(e.methods as RestMethod[]),
      query: listed.query,
      document,
      operation,
      comment: e.comment ?? null,
      meta: e,
    });
  }
  const bySize = new Map<number, RestEndpoint[]>();
  for (const ep of ok) bySize.set(ep.segments.length, [...(bySize.get(ep.segments.length) ?? []), ep]);
  return { endpoints: ok, bySize };
}

/** The endpoint for a request: its path below `/api/rest/` split into decoded segments, and its method. */
export function matchRest(router: RestRouter, segments: string[], method: string): RestMatch {
  const candidates = router.bySize.get(segments.length);
  if (!candidates) return { kind: 'none' };
  const allowed = new Set<RestMethod>();
  for (const ep of candidates) {
    let params: Record<string, string> | undefined = {};
    for (let i = 0; i < segments.length; i++) {
      const s = ep.segments[i]!;
      if ('literal' in s) {
        if (s.literal !== segments[i]) {
          params = undefined;
          break;
        }
      } else params[s.variable] = segments[i]!;
    }
    if (!params) continue;
    // templates that can match one path share no method (checked at build): the first with the method is the one
    if (ep.methods.has(method as RestMethod)) return { kind: 'found', endpoint: ep, params };
    for (const m of ep.methods) allowed.add(m);
  }
  if (allowed.size) return { kind: 'method', allowed: REST_METHODS.filter((m) => allowed.has(m)) };
  return { kind: 'none' };
}
