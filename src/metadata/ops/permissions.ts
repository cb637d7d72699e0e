/** create_/drop_{insert,select,update,delete}_permission, set_permission_comment. */
import { SvcError } from '../../errors.js';
import { ArgReader, expectInt, expectObject, parseColumnList, reader } from '../../document/args.js';
import { dropDependents } from '../../schema/dependencies.js';
import { SUCCESS, defineOp } from '../registry.js';
import { PERMISSION_KINDS, type PermissionKind, type TableMetadata } from '../../model/metadata.js';
import { findTable } from './tables.js';
import { permissionAlreadyDefined, permissionNotDefined, permissionNotExists } from '../../document/messages.js';

function parsePermission(kind: PermissionKind, v: unknown, path: string): Record<string, unknown> {
  const a = new ArgReader(v, path);
  const out: Record<string, unknown> = {};
  const boolExp = (key: string, required: boolean) => {
    const x = required ? a.required(key) : a.raw(key);
    if (x === undefined || (x === null && !required)) return undefined;
    return expectObject(x, a.sub(key));
  };
  const presets = () => {
    const s = a.raw('set');
    if (s === undefined || s === null) return undefined;
    return expectObject(s, a.sub('set'));
  };
  switch (kind) {
    case 'insert': {
      out.check = boolExp('check', true);
      const set = presets();
      if (set) out.set = set;
      if (a.has('columns')) out.columns = parseColumnList(a.raw('columns'), a.sub('columns'));
      const bo = a.bool('backend_only', false);
      if (bo) out.backend_only = true;
      break;
    }
    case 'select': {
      out.columns = parseColumnList(a.required('columns'), a.sub('columns'));
      const cf = a.raw('computed_fields');
      if (cf !== undefined && cf !== null) {
        const list = parseColumnList(cf, a.sub('computed_fields'));
        if (Array.isArray(list) && list.length) out.computed_fields = list;
      }
      out.filter = boolExp('filter', true);
      const limit = a.raw('limit');
      if (limit !== undefined && limit !== null) {
        const n = expectInt(limit, a.sub('limit'));
        if (n < 0) throw new SvcError(400, 'parse-failed', 'unexpected negative value', a.sub('limit'));
        out.limit = n;
      }
      if (a.bool('allow_aggregations', false)) out.allow_aggregations = true;
      break;
    }
    case 'update': {
      out.columns = parseColumnList(a.required('columns'), a.sub('columns'));
      out.filter = boolExp('filter', true);
      const check = boolExp('check', false);
      out.check = check ?? null;
      const set = presets();
      if (set) out.set = set;
      break;
    }
    case 'delete':
      out.filter = boolExp('filter', true);
      break;
  }
  a.done();
  return out;
}

function perms(t: TableMetadata, kind: PermissionKind) {
  return t[`${kind}_permissions`] as Array<{ role: string; permission: unknown; comment?: string | null }>;
}

for (const kind of PERMISSION_KINDS) {
  defineOp(`create_${kind}_permission`, {
    kind: 'metadata',
    async run(ctx, args) {
      const a = reader(args);
      const table = a.table();
      const role = a.name('role');
      const permission = parsePermission(kind, a.required('permission'), a.sub('permission'));
      const comment = a.string('comment', true);
      a.done();
      const t = findTable(ctx, table);
      const list = perms(t, kind);
      if (list.some((p) => p.role === role)) {
        throw permissionAlreadyDefined(kind, table, role, ctx.path);
      }
      list.push({ role, permission, ...(comment !== undefined ? { comment } : {}) });
      return SUCCESS;
    },
  });

  defineOp(`drop_${kind}_permission`, {
    kind: 'metadata',
    async run(ctx, args) {
      const a = reader(args);
      const table = a.table();
      const role = a.name('role');
      a.done();
      const t = findTable(ctx, table);
      const list = perms(t, kind);
      if (!list.some((p) => p.role === role)) {
        throw permissionNotExists(kind, table, role, ctx.path);
      }
      dropDependents(ctx.state.metadata, ctx.state.cache, [], false, ctx.path);
      (t[`${kind}_permissions`] as unknown[]) = list.filter((p) => p.role !== role);
      return SUCCESS;
    },
  });
}

defineOp('set_permission_comment', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const table = a.table();
    const role = a.name('role');
    const type = a.string('type');
    const comment = a.string('comment', true);
    a.done();
    if (!(PERMISSION_KINDS as readonly string[]).includes(type)) {
      throw new SvcError(400, 'parse-failed', "perm_type should be one of 'insert', 'select', 'update', 'delete'", a.sub('type'));
    }
    const t = findTable(ctx, table);
    const p = perms(t, type as PermissionKind).find((x) => x.role === role);
    if (!p) {
      throw permissionNotDefined(type, table, role, ctx.path);
    }
    if (comment === undefined) delete p.comment;
    else p.comment = comment;
    return SUCCESS;
  },
});
