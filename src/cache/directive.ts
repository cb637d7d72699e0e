/**
 * `@cached(ttl: Int = 60, refresh: Boolean = false)` on a query operation (Hasura v2's directive):
 * its declaration (listed by introspection) and its reading from an operation, once per plan.
 * Arguments are literals or variables (read per request, a cached plan keeps the variable's name).
 */
import { DirectiveLocation, GraphQLBoolean, GraphQLDirective, GraphQLInt, Kind, type OperationDefinitionNode, type ValueNode } from 'graphql';
import { argumentsDefinedMoreThanOnce, directivesUsedMoreThanOnce, noSuchArgument, validationError } from '../ir/messages.js';

export const DEFAULT_TTL_SECONDS = 60;
/** the largest ttl accepted (Hasura v2 caps it at one hour by default) */
export const MAX_TTL_SECONDS = 3600;

export const CachedDirective = new GraphQLDirective({
  name: 'cached',
  description: 'whether this query should be cached (Svc: invalidated by writes to the tables it reads)',
  locations: [DirectiveLocation.QUERY],
  args: {
    ttl: { type: GraphQLInt, defaultValue: DEFAULT_TTL_SECONDS, description: 'measured in seconds' },
    refresh: { type: GraphQLBoolean, defaultValue: false, description: 'refresh the cache entry' },
  },
});

/** A directive argument: its value, or the variable that gives it per request. */
export type ArgValue<T> = { value: T } | { variable: string };

export interface CachedArgs {
  ttl: ArgValue<number>;
  refresh: ArgValue<boolean>;
}

/**
 * The `@cached` of an operation, undefined without one. Errors (validation-failed) for a use on a
 * mutation or subscription (the directive's location is QUERY only), an unknown or repeated
 * argument, or a literal of the wrong type.
 */
export function cachedDirective(def: OperationDefinitionNode): CachedArgs | undefined {
  const ds = def.directives;
  if (!ds || ds.length === 0) return undefined;
  const found = ds.filter((d) => d.name.value === 'cached');
  if (found.length === 0) return undefined;
  const path = '$.directives';
  if (found.length > 1) throw directivesUsedMoreThanOnce(['cached'], path);
  if (def.operation !== 'query') throw validationError(`directive "cached" is not allowed on a ${def.operation}: only queries are cached`, `${path}.cached`);
  const d = found[0]!;
  const given = (d.arguments ?? []).map((a) => a.name.value);
  const twice = [...new Set(given.filter((n, i) => given.indexOf(n) !== i))];
  if (twice.length) throw argumentsDefinedMoreThanOnce(twice, `${path}.cached.args`);
  const out: CachedArgs = { ttl: { value: DEFAULT_TTL_SECONDS }, refresh: { value: false } };
  for (const a of d.arguments ?? []) {
    const name = a.name.value;
    const apath = `${path}.cached.args.${name}`;
    if (name === 'ttl') out.ttl = readArg(a.value, apath, 'Int', (v) => (v.kind === Kind.INT ? checkTtl(Number(v.value), apath) : undefined));
    else if (name === 'refresh') out.refresh = readArg(a.value, apath, 'Boolean', (v) => (v.kind === Kind.BOOLEAN ? v.value : undefined));
    else throw noSuchArgument(name, apath);
  }
  return out;
}

function readArg<T>(v: ValueNode, path: string, type: string, literal: (v: ValueNode) => T | undefined): ArgValue<T> {
  if (v.kind === Kind.VARIABLE) return { variable: v.name.value };
  const x = literal(v);
  if (x === undefined) throw validationError(`expected ${type} for an argument of directive "cached"`, path);
  return { value: x };
}

export function checkTtl(n: number, path: string): number {
  if (!Number.isInteger(n) || n < 0 || n > MAX_TTL_SECONDS)
    throw validationError(`ttl of directive "cached" must be an integer between 0 and ${MAX_TTL_SECONDS}`, path);
  return n;
}

/** An argument's value for a request's (coerced) variables; a null or missing variable gives the default. */
export function argValue<T>(a: ArgValue<T>, variables: Record<string, unknown>, fallback: T, check: (v: unknown) => T | undefined): T {
  if ('value' in a) return a.value;
  const v = variables[a.variable];
  if (v === undefined || v === null) return fallback;
  const x = check(v);
  if (x === undefined)
    throw validationError(`variable "${a.variable}" has the wrong type for an argument of directive "cached"`, `$.variableValues.${a.variable}`);
  return x;
}
