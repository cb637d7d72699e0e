/**
 * API limits (issue 36, Hasura v2's `api_limits`): the limits that apply to a role, the depth and
 * node count of an operation, and the errors of exceeding them. The rate limit's counters are in
 * src/server/rateLimit.ts; the time limit is applied by runGraphQL (graphql.ts).
 *
 * Cost: with no `api_limits` in the metadata, `roleLimits` is one property read. With limits, a
 * role's limits are resolved once per schema cache, and an operation's depth and node count once
 * per plan-cache entry (they are stored with it): a repeated request compares two numbers.
 */
import { Kind, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';
import { SvcError } from '../errors.js';
import type { Operation } from '../ir/document.js';
import type { SchemaCache } from '../schema/model.js';
import { ADMIN_ROLE } from '../core/session.js';

export interface RoleLimits {
  depth?: number;
  nodes?: number;
  /** milliseconds */
  timeMs?: number;
  batch?: number;
  rate?: { max: number; unique: 'IP' | string[] | null };
}

const memo = new WeakMap<SchemaCache, Map<string, RoleLimits | null>>();

/**
 * The limits of a role (undefined: none). `per_role` overrides `global`; the admin role is exempt
 * from the global limits (as in v2) but a limit set for `admin` in `per_role` applies to it.
 */
export function roleLimits(cache: SchemaCache, role: string): RoleLimits | undefined {
  const l = cache.metadata.api_limits;
  if (l === undefined || l.disabled) return undefined;
  let m = memo.get(cache);
  if (!m) memo.set(cache, (m = new Map()));
  let r = m.get(role);
  if (r === undefined) {
    const admin = role === ADMIN_ROLE;
    const pick = <T>(x: { global: T; per_role: Record<string, T> } | undefined): T | undefined => {
      if (!x) return undefined;
      if (Object.prototype.hasOwnProperty.call(x.per_role, role)) return x.per_role[role];
      return admin ? undefined : x.global;
    };
    const out: RoleLimits = {};
    const depth = pick(l.depth_limit);
    if (depth !== undefined) out.depth = depth;
    const nodes = pick(l.node_limit);
    if (nodes !== undefined) out.nodes = nodes;
    const time = pick(l.time_limit);
    if (time !== undefined) out.timeMs = Math.max(1, Math.round(time * 1000));
    const batch = pick(l.batch_limit);
    if (batch !== undefined) out.batch = batch;
    const rate = pick(l.rate_limit);
    if (rate !== undefined) out.rate = { max: rate.max_reqs_per_min, unique: rate.unique_params };
    r = Object.keys(out).length ? out : null;
    // bounded: roles come from the request (a JWT may name any role)
    if (m.size >= 10_000) m.clear();
    m.set(role, r);
  }
  return r ?? undefined;
}

export interface OperationSize {
  /** nesting of fields with a selection set (v2: `viewer { name }` has depth 1); introspection excluded */
  depth: number;
  /** fields with a selection set, fragments expanded */
  nodes: number;
}

/** v2's depth and node count of the operation (fragments expanded by counting, memoised per fragment). */
export function measureOperation(op: Operation): OperationSize {
  const memoF = new Map<string, OperationSize>();
  const visiting = new Set<string>();
  const fragment = (f: FragmentDefinitionNode): OperationSize => {
    const name = f.name.value;
    const known = memoF.get(name);
    if (known) return known;
    if (visiting.has(name)) return { depth: 0, nodes: 0 }; // a cycle: field collection reports it
    visiting.add(name);
    const s = set(f.selectionSet, false);
    visiting.delete(name);
    memoF.set(name, s);
    return s;
  };
  const set = (sel: SelectionSetNode, root: boolean): OperationSize => {
    let depth = 0;
    let nodes = 0;
    for (const s of sel.selections) {
      let x: OperationSize;
      if (s.kind === Kind.FIELD) {
        if (!s.selectionSet) continue;
        const sub = set(s.selectionSet, false);
        // introspection is not subject to depth limits (v2); its nodes count
        const introspection = root && s.name.value.startsWith('__');
        x = { depth: introspection ? 0 : sub.depth + 1, nodes: sub.nodes + 1 };
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        x = set(s.selectionSet, root);
      } else {
        const f = op.fragments.get(s.name.value);
        x = f ? (root ? set(f.selectionSet, true) : fragment(f)) : { depth: 0, nodes: 0 };
      }
      if (x.depth > depth) depth = x.depth;
      nodes += x.nodes;
    }
    return { depth, nodes };
  };
  return set(op.def.selectionSet, true);
}

/** Throws the depth or node limit's error when the operation exceeds one. */
export function checkOperationSize(size: OperationSize, limits: RoleLimits): void {
  if (limits.depth !== undefined && size.depth > limits.depth) {
    throw new SvcError(400, 'validation-failed', `depth limit exceeded: the operation's depth is ${size.depth}, the limit is ${limits.depth}`, '$');
  }
  if (limits.nodes !== undefined && size.nodes > limits.nodes) {
    throw new SvcError(400, 'validation-failed', `node limit exceeded: the operation has ${size.nodes} nodes, the limit is ${limits.nodes}`, '$');
  }
}

export const batchLimitExceeded = (n: number, limit: number): SvcError =>
  new SvcError(400, 'validation-failed', `batch limit exceeded: the request has ${n} operations, the limit is ${limit}`, '$');

export const timeLimitExceeded = (ms: number): SvcError =>
  new SvcError(400, 'time-limit-exceeded', `time limit exceeded: the operation took longer than ${ms / 1000} seconds`, '$');

export const rateLimitExceeded = (max: number): SvcError =>
  new SvcError(429, 'rate-limit-exceeded', `rate limit exceeded: at most ${max} requests per minute`, '$');
