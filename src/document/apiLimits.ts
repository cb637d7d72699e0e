/**
 * The shapes of issue 36's metadata beyond v1.3, as Hasura v2 writes them: API limits
 * (`set_api_limits`, `api_limits` in the metadata) and the scope of an allow-list entry.
 * Parsed strictly (an unknown key is an error, where v2 ignores it: a misspelt `depth_limt`
 * must not silently mean "no limit"); messages are v2's where v2 has one.
 */
import { SvcError, pathKey } from '../errors.js';
import { ArgReader, expectArray, expectBool, expectObject, parseFailed, typeMismatch } from './args.js';
import type { AllowlistEntry, AllowlistScope, ApiLimits, Limit, RateLimitConfig } from '../model/metadata.js';

const UNIQUE_PARAMS_ERROR = "Not a valid value. Should be either: 'IP' or a list of Svc session variables";

const nonNegativeInt = (v: unknown, path: string): number => {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw typeMismatch('Int', 'Number', v, path);
  if (v < 0) throw parseFailed(`expected a non-negative integer, encountered ${v}`, path);
  return v;
};

const positiveSeconds = (v: unknown, path: string): number => {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw typeMismatch('Seconds', 'Number', v, path);
  if (v <= 0) throw parseFailed(`expected a positive number of seconds, encountered ${v}`, path);
  // setTimeout's range (about 24.8 days)
  if (v > 2_000_000) throw parseFailed(`a time limit is at most 2000000 seconds, encountered ${v}`, path);
  return v;
};

function parseLimit<T>(v: unknown, path: string, value: (v: unknown, path: string) => T): Limit<T> {
  const a = new ArgReader(v, path, 'Limit');
  const global = value(a.required('global'), a.sub('global'));
  const per: Record<string, T> = {};
  const pr = a.raw('per_role');
  if (pr !== undefined && pr !== null) {
    const o = expectObject(pr, a.sub('per_role'), 'HashMap RoleName');
    for (const [role, x] of Object.entries(o)) {
      if (role === '') throw parseFailed('empty string not allowed', a.sub('per_role'));
      per[role] = value(x, a.sub('per_role') + pathKey(role));
    }
  }
  a.done();
  return { global, per_role: per };
}

function parseUniqueParams(v: unknown, path: string): RateLimitConfig['unique_params'] {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') {
    if (v.toLowerCase() === 'ip') return 'IP';
    throw parseFailed(UNIQUE_PARAMS_ERROR, path);
  }
  if (!Array.isArray(v)) throw parseFailed(UNIQUE_PARAMS_ERROR, path);
  const out: string[] = [];
  for (const s of v) {
    if (typeof s !== 'string' || !/^x-svc-./i.test(s) || s.toLowerCase() === 'x-svc-role') throw parseFailed(UNIQUE_PARAMS_ERROR, path);
    out.push(s);
  }
  return out;
}

function parseRateLimitConfig(v: unknown, path: string): RateLimitConfig {
  const a = new ArgReader(v, path, 'RateLimitConfig');
  const max = nonNegativeInt(a.required('max_reqs_per_min'), a.sub('max_reqs_per_min'));
  const unique = parseUniqueParams(a.raw('unique_params'), a.sub('unique_params'));
  a.done();
  return { max_reqs_per_min: max, unique_params: unique };
}

/** `set_api_limits`'s args and `api_limits` of a metadata document. */
export function parseApiLimits(v: unknown, path: string): ApiLimits {
  const a = new ArgReader(v, path, 'ApiLimit');
  const out: ApiLimits = { disabled: false };
  const d = a.raw('disabled');
  if (d !== undefined && d !== null) out.disabled = expectBool(d, a.sub('disabled'));
  const opt = <T>(
    key: 'depth_limit' | 'node_limit' | 'time_limit' | 'batch_limit' | 'rate_limit',
    value: (v: unknown, path: string) => T,
  ): Limit<T> | undefined => {
    const x = a.raw(key);
    return x === undefined || x === null ? undefined : parseLimit(x, a.sub(key), value);
  };
  const rate = opt('rate_limit', parseRateLimitConfig);
  const depth = opt('depth_limit', nonNegativeInt);
  const node = opt('node_limit', nonNegativeInt);
  const time = opt('time_limit', positiveSeconds);
  const batch = opt('batch_limit', nonNegativeInt);
  a.done();
  if (rate) out.rate_limit = rate;
  if (depth) out.depth_limit = depth;
  if (node) out.node_limit = node;
  if (time) out.time_limit = time;
  if (batch) out.batch_limit = batch;
  return out;
}

/** v2's `AllowlistScope` parser (its messages). */
export function parseAllowlistScope(v: unknown, path: string): AllowlistScope {
  const a = new ArgReader(v, path, 'AllowlistScope');
  const global = expectBool(a.required('global'), a.sub('global'));
  const roles = a.raw('roles');
  a.done();
  if (global) {
    if (roles !== undefined && roles !== null) throw parseFailed('roles are not allowed when global is true', path);
    return { global: true };
  }
  if (roles === undefined) throw parseFailed('key "roles" not found', path);
  const list = expectArray(roles, `${path}.roles`);
  if (list.length === 0) throw parseFailed('parsing NonEmpty failed, unexpected empty list', `${path}.roles`);
  const names = list.map((r, i) => {
    if (typeof r !== 'string') throw typeMismatch('RoleName', 'String', r, `${path}.roles[${i}]`);
    if (r === '') throw parseFailed('empty string not allowed', `${path}.roles[${i}]`);
    return r;
  });
  if (new Set(names).size !== names.length) throw parseFailed('duplicate roles are not allowed', path);
  return { global: false, roles: names };
}

/** One entry of `allowlist` in a metadata document. */
export function parseAllowlistEntry(v: unknown, path: string): AllowlistEntry {
  const a = new ArgReader(v, path, 'AllowlistEntry');
  const collection = a.name('collection');
  const s = a.raw('scope');
  a.done();
  return s === undefined || s === null ? { collection } : { collection, scope: parseAllowlistScope(s, a.sub('scope')) };
}

/** A metadata document's `allowlist`: entries checked, one per collection (v2's message). */
export function parseAllowlist(v: unknown[], path: string): AllowlistEntry[] {
  const out = v.map((x, i) => parseAllowlistEntry(x, `${path}[${i}]`));
  const seen = new Set<string>();
  const dups = new Set<string>();
  for (const e of out) (seen.has(e.collection) ? dups : seen).add(e.collection);
  if (dups.size) throw new SvcError(400, 'parse-failed', `multiple declarations exist for the following allowlist entries: ${[...dups].join(', ')}`, '$');
  return out;
}

/** v2's toJSON: `disabled` always, each set limit with its `per_role`, `unique_params` null when unset. */
export function exportApiLimits(l: ApiLimits): Record<string, unknown> {
  const out: Record<string, unknown> = { disabled: l.disabled };
  for (const k of ['rate_limit', 'depth_limit', 'node_limit', 'time_limit', 'batch_limit'] as const) {
    const x = l[k];
    if (x) out[k] = { global: x.global, per_role: x.per_role };
  }
  return out;
}

/** Is anything set (an api_limits without limits is not exported, as v2 leaves out an empty one)? */
export function apiLimitsEmpty(l: ApiLimits | undefined): boolean {
  return !l || (!l.disabled && !l.rate_limit && !l.depth_limit && !l.node_limit && !l.time_limit && !l.batch_limit);
}
