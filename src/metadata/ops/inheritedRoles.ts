/** add_inherited_role, drop_inherited_role (Hasura v2's metadata API; src/document/inherited.ts). */
import { SvcError } from '../../errors.js';
import { reader } from '../../document/args.js';
import { cyclesError, parseInheritedRole, roleCycles } from '../../document/inherited.js';
import { dependentObjects, notExists } from '../../document/messages.js';
import { SUCCESS, defineOp } from '../registry.js';

defineOp('add_inherited_role', {
  kind: 'metadata',
  async run(ctx, args) {
    const role = parseInheritedRole(args, '$');
    const md = ctx.state.metadata;
    if (md.inherited_roles.some((r) => r.role_name === role.role_name)) {
      throw new SvcError(400, 'already-exists', `the inherited role ${JSON.stringify(role.role_name)} already exists`, ctx.path);
    }
    const next = [...md.inherited_roles, role];
    const cycles = roleCycles(next);
    if (cycles.length) throw cyclesError(cycles, ctx.path);
    md.inherited_roles = next;
    return SUCCESS;
  },
});

defineOp('drop_inherited_role', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args, 'DropInheritedRole');
    const name = a.name('role_name');
    a.done();
    const md = ctx.state.metadata;
    if (!md.inherited_roles.some((r) => r.role_name === name)) throw notExists(`${JSON.stringify(name)} inherited role doesn't exist`, ctx.path);
    // an inherited role that includes it would silently change meaning: drop that one first
    const users = md.inherited_roles.filter((r) => r.role_set.includes(name)).map((r) => `inherited role ${JSON.stringify(r.role_name)}`);
    if (users.length) throw dependentObjects(users, ctx.path);
    md.inherited_roles = md.inherited_roles.filter((r) => r.role_name !== name);
    return SUCCESS;
  },
});
