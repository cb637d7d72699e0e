/**
 * Actions: create_action, update_action, drop_action (clear_data), create_action_permission,
 * drop_action_permission. Arguments are read as upstream's aeson parsers do (unknown keys are
 * ignored); whether the types exist is decided by the schema build (src/schema/actions.ts): an
 * action it cannot resolve makes the operation fail with its reason, and nothing is stored.
 */
import { SvcError, alreadyExists, notExists } from '../../errors.js';
import { ArgReader } from '../../document/args.js';
import { parseActionDefinition } from '../../schema/actionDefinition.js';
import { SUCCESS, defineOp, type OpContext } from '../registry.js';
import type { ActionMetadata } from '../../model/metadata.js';

const parseFailed = (message: string, path: string) => new SvcError(400, 'parse-failed', message, path);
const lenient = (v: unknown, path: string) => new ArgReader(v, path, 'Object', false);

function findAction(ctx: OpContext, name: string): ActionMetadata {
  const a = ctx.state.metadata.actions.find((x) => x.name === name);
  if (!a) throw notExists(`action with name ${JSON.stringify(name)} does not exist`, ctx.path);
  return a;
}

defineOp('create_action', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = lenient(args, '$');
    const name = a.name('name');
    if (!/^[_A-Za-z][_0-9A-Za-z]*$/.test(name)) throw parseFailed(`${JSON.stringify(name)} is not a valid GraphQL name`, a.sub('name'));
    const definition = parseActionDefinition(a.required('definition'), a.sub('definition'));
    const comment = a.string('comment', true);
    if (ctx.state.metadata.actions.some((x) => x.name === name)) throw alreadyExists(`action with name ${JSON.stringify(name)} already exists`, ctx.path);
    ctx.state.metadata.actions.push({ name, definition, ...(comment !== undefined ? { comment } : {}) });
    return SUCCESS;
  },
});

defineOp('update_action', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = lenient(args, '$');
    const name = a.name('name');
    const definition = parseActionDefinition(a.required('definition'), a.sub('definition'));
    findAction(ctx, name).definition = definition;
    return SUCCESS;
  },
});

defineOp('drop_action', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = lenient(args, '$');
    const name = a.name('name');
    const clearData = a.bool('clear_data', true);
    findAction(ctx, name);
    ctx.state.metadata.actions = ctx.state.metadata.actions.filter((x) => x.name !== name);
    // the log of an action's calls (async actions) goes with it unless asked to keep it
    if (clearData) await ctx.conn.query('delete from svc_catalog.hdb_action_log where action_name = $1', [name]);
    return SUCCESS;
  },
});

defineOp('create_action_permission', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = lenient(args, '$');
    const action = a.name('action');
    const role = a.name('role');
    const comment = a.string('comment', true);
    const act = findAction(ctx, action);
    const perms = (act.permissions ??= []);
    if (perms.some((p) => p.role === role)) {
      throw alreadyExists(`permission for role: ${JSON.stringify(role)} is already defined on ${JSON.stringify(action)}`, ctx.path);
    }
    perms.push({ role, ...(comment !== undefined ? { comment } : {}) });
    return SUCCESS;
  },
});

defineOp('drop_action_permission', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = lenient(args, '$');
    // the example says `action`, the argument table `name`
    const action = a.has('action') ? a.name('action') : a.name('name');
    const role = a.name('role');
    const act = findAction(ctx, action);
    if (!(act.permissions ?? []).some((p) => p.role === role)) {
      throw notExists(`permission for role: ${JSON.stringify(role)} is not defined on ${JSON.stringify(action)}`, ctx.path);
    }
    act.permissions = (act.permissions ?? []).filter((p) => p.role !== role);
    return SUCCESS;
  },
});
