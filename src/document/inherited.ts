/**
 * Inherited roles (Hasura v2's `inherited_roles`): parsing and the role graph. An inherited role
 * names a set of roles (plain roles, or other inherited roles; no cycles) and holds the union of
 * their permissions: select is combined per row and column (permissions/view.ts), insert/update/
 * delete are inherited only when its roles' permissions are identical (schema/build.ts), actions
 * when any of its roles may call them. Its own permissions override the inherited ones.
 */
import { SvcError } from '../errors.js';
import { ADMIN_ROLE } from '../core/session.js';
import { ArgReader, expectArray, expectText, parseFailed } from './args.js';
import type { InheritedRoleMetadata } from '../model/metadata.js';

const q = (s: string): string => JSON.stringify(s);

/** `{role_name, role_set}` at `path` (an op's args, or an entry of a metadata document). */
export function parseInheritedRole(v: unknown, path: string): InheritedRoleMetadata {
  const a = new ArgReader(v, path, 'InheritedRole');
  const roleName = a.name('role_name');
  const set = expectArray(a.required('role_set'), a.sub('role_set'));
  a.done();
  if (roleName === ADMIN_ROLE) throw new SvcError(400, 'invalid-params', `the ${q(ADMIN_ROLE)} role cannot be an inherited role`, a.sub('role_name'));
  if (set.length === 0)
    throw new SvcError(400, 'invalid-params', `the role_set of the inherited role ${q(roleName)} is empty: it needs at least one role`, a.sub('role_set'));
  const seen = new Set<string>();
  const roleSet = set.map((r, i) => {
    const p = `${a.sub('role_set')}[${i}]`;
    const name = expectText(r, p);
    if (name === '') throw parseFailed('empty string not allowed', p);
    if (name === ADMIN_ROLE) throw new SvcError(400, 'invalid-params', `the ${q(ADMIN_ROLE)} role cannot be in the role_set of an inherited role`, p);
    if (name === roleName) throw new SvcError(400, 'invalid-params', 'an inherited role name cannot be in the role combination', p);
    if (seen.has(name)) throw new SvcError(400, 'invalid-params', `the role ${q(name)} is given twice in the role_set of ${q(roleName)}`, p);
    seen.add(name);
    return name;
  });
  return { role_name: roleName, role_set: roleSet };
}

/**
 * The cycles of the role graph, each as a path that ends where it starts (`["a","b","a"]`), in a
 * stable order; empty when there is none.
 */
export function roleCycles(roles: readonly InheritedRoleMetadata[]): string[][] {
  const edges = new Map(roles.map((r) => [r.role_name, r.role_set]));
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[][] = [];
  const stack: string[] = [];
  const visit = (n: string): void => {
    state.set(n, 'open');
    stack.push(n);
    for (const m of edges.get(n) ?? []) {
      if (!edges.has(m)) continue;
      const s = state.get(m);
      if (s === 'open') cycles.push([...stack.slice(stack.indexOf(m)), m]);
      else if (s === undefined) visit(m);
    }
    stack.pop();
    state.set(n, 'done');
  };
  for (const n of [...edges.keys()].sort()) if (!state.has(n)) visit(n);
  return cycles;
}

/** Hasura v2's error for a cyclic role graph (400 `cyclic-dependency`). */
export function cyclesError(cycles: string[][], path: string): SvcError {
  return new SvcError(400, 'cyclic-dependency', `found cycle(s) in roles: ${cycles.map((c) => JSON.stringify(c)).join(', ')}`, path);
}

/** Checks a whole `inherited_roles` list (replace_metadata): each entry, unique names, no cycles. */
export function parseInheritedRoles(list: unknown[], path: string): InheritedRoleMetadata[] {
  const out = list.map((x, i) => parseInheritedRole(x, `${path}[${i}]`));
  const names = new Set<string>();
  out.forEach((r, i) => {
    if (names.has(r.role_name)) throw new SvcError(400, 'already-exists', `the inherited role ${q(r.role_name)} is defined twice`, `${path}[${i}].role_name`);
    names.add(r.role_name);
  });
  const cycles = roleCycles(out);
  if (cycles.length) throw cyclesError(cycles, path);
  return out;
}

/** The roles in dependency order: an inherited role after every inherited role of its set. */
export function orderInheritedRoles(roles: ReadonlyMap<string, readonly string[]>): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const visit = (n: string, depth: number): void => {
    if (seen.has(n) || depth > roles.size) return; // depth: cycles were refused, but never loop
    seen.add(n);
    for (const m of roles.get(n) ?? []) if (roles.has(m)) visit(m, depth + 1);
    out.push(n);
  };
  for (const n of [...roles.keys()].sort()) visit(n, 0);
  return out;
}
