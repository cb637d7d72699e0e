/** create_object_relationship, create_array_relationship, drop/rename_relationship, set_relationship_comment. */
import { SvcError } from '../../errors.js';
import { expectObject, parseQualified, reader } from '../../document/args.js';
import { dropDependents } from '../../schema/dependencies.js';
import { SUCCESS, defineOp, type OpContext } from '../registry.js';
import { normalizeTableName } from '../../permissions/boolexp.js';
import type { TableModel } from '../../model/tables.js';
import { qualifiedKey, sameName, type ArrRelUsing, type ObjRelUsing, type TableMetadata } from '../../model/metadata.js';
import { findTable } from './tables.js';
import { fieldAlreadyExists, relationshipNotExists } from '../../document/messages.js';

function parseUsing(kind: 'object' | 'array', v: unknown, path: string): ObjRelUsing | ArrRelUsing {
  const o = expectObject(v, path);
  const hasFk = o.foreign_key_constraint_on !== undefined;
  const hasManual = o.manual_configuration !== undefined;
  if (hasFk === hasManual) {
    throw new SvcError(400, 'parse-failed', 'expecting exactly one of "foreign_key_constraint_on" or "manual_configuration"', path);
  }
  if (hasManual) {
    const m = expectObject(o.manual_configuration, `${path}.manual_configuration`);
    const remote_table = parseQualified(m.remote_table, `${path}.manual_configuration.remote_table`);
    const mapping = expectObject(m.column_mapping, `${path}.manual_configuration.column_mapping`);
    for (const [k, x] of Object.entries(mapping)) {
      if (typeof x !== 'string') throw new SvcError(400, 'parse-failed', 'expecting a column name', `${path}.manual_configuration.column_mapping.${k}`);
    }
    return { manual_configuration: { remote_table, column_mapping: mapping as Record<string, string> } };
  }
  const fk = o.foreign_key_constraint_on;
  if (kind === 'object') {
    if (typeof fk !== 'string') throw new SvcError(400, 'parse-failed', 'expecting a column name', `${path}.foreign_key_constraint_on`);
    return { foreign_key_constraint_on: fk };
  }
  const f = expectObject(fk, `${path}.foreign_key_constraint_on`);
  if (typeof f.column !== 'string') throw new SvcError(400, 'parse-failed', 'key "column" not found', `${path}.foreign_key_constraint_on`);
  return { foreign_key_constraint_on: { table: parseQualified(f.table, `${path}.foreign_key_constraint_on.table`), column: f.column } };
}

function allRelNames(t: TableMetadata): string[] {
  return [...t.object_relationships, ...t.array_relationships].map((r) => r.name);
}

for (const kind of ['object', 'array'] as const) {
  defineOp(`create_${kind}_relationship`, {
    kind: 'metadata',
    async run(ctx, args) {
      const a = reader(args);
      const table = a.table();
      const name = a.name('name');
      const using = parseUsing(kind, a.required('using'), a.sub('using'));
      const comment = a.string('comment', true);
      a.done();
      const t = findTable(ctx, table);
      if (allRelNames(t).includes(name) || t.computed_fields.some((c) => c.name === name)) {
        throw fieldAlreadyExists(name, table, ctx.path);
      }
      const def = { name, using, ...(comment !== undefined ? { comment } : {}) };
      if (kind === 'object') t.object_relationships.push(def as TableMetadata['object_relationships'][number]);
      else t.array_relationships.push(def as TableMetadata['array_relationships'][number]);
      return SUCCESS;
    },
  });
}

function findRel(ctx: OpContext, t: TableMetadata, name: string) {
  const r = t.object_relationships.find((x) => x.name === name) ?? t.array_relationships.find((x) => x.name === name);
  if (!r) throw relationshipNotExists(name, ctx.path);
  return r;
}

defineOp('drop_relationship', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const table = a.table();
    const name = a.has('relationship') ? a.name('relationship') : a.name('name');
    const cascade = a.bool('cascade', false);
    a.done();
    const t = findTable(ctx, table);
    findRel(ctx, t, name);
    dropDependents(ctx.state.metadata, ctx.state.cache, [{ kind: 'relationship', table, name }], cascade, ctx.path);
    const t2 = findTable(ctx, table);
    t2.object_relationships = t2.object_relationships.filter((r) => r.name !== name);
    t2.array_relationships = t2.array_relationships.filter((r) => r.name !== name);
    return SUCCESS;
  },
});

defineOp('rename_relationship', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const table = a.table();
    const name = a.name('name');
    const newName = a.name('new_name');
    a.done();
    const t = findTable(ctx, table);
    const r = findRel(ctx, t, name);
    if (allRelNames(t).includes(newName)) {
      throw fieldAlreadyExists(newName, table, ctx.path);
    }
    // every permission (of any table) traversing the relationship is rewritten: the
    // expressions are walked with their table as context, so only uses of this
    // relationship are renamed (not columns or relationships of the same name elsewhere)
    const cache = ctx.state.cache;
    const rewrite = (e: unknown, on: TableModel | undefined): unknown => {
      if (!on || !e || typeof e !== 'object' || Array.isArray(e)) return e;
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(e as Record<string, unknown>)) {
        if (k === '_and' || k === '$and' || k === '_or' || k === '$or') out[k] = Array.isArray(v) ? v.map((x) => rewrite(x, on)) : v;
        else if (k === '_not' || k === '$not') out[k] = rewrite(v, on);
        else if ((k === '_exists' || k === '$exists') && v && typeof v === 'object' && '_where' in v) {
          let target: TableModel | undefined;
          try {
            target = cache.tables.get(qualifiedKey(normalizeTableName((v as { _table?: unknown })._table)));
          } catch {
            target = undefined;
          }
          out[k] = { ...(v as Record<string, unknown>), _where: rewrite((v as { _where: unknown })._where, target) };
        } else if (on.columnsByName.has(k)) out[k] = v;
        else if (on.relationships.has(k)) {
          const rel = on.relationships.get(k)!;
          out[sameName(on.name, table) && k === name ? newName : k] = rewrite(v, cache.tables.get(qualifiedKey(rel.remoteTable)));
        } else out[k] = v;
      }
      return out;
    };
    for (const pt of ctx.state.metadata.tables) {
      const on = cache.tables.get(qualifiedKey(pt.table));
      const exp = (e: Record<string, unknown>) => rewrite(e, on) as Record<string, unknown>;
      for (const p of pt.select_permissions) p.permission.filter = exp(p.permission.filter);
      for (const p of pt.delete_permissions) p.permission.filter = exp(p.permission.filter);
      for (const p of pt.insert_permissions) p.permission.check = exp(p.permission.check);
      for (const p of pt.update_permissions) {
        p.permission.filter = exp(p.permission.filter);
        if (p.permission.check) p.permission.check = exp(p.permission.check);
      }
    }
    r.name = newName;
    return SUCCESS;
  },
});

defineOp('set_relationship_comment', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const table = a.table();
    const name = a.has('relationship') ? a.name('relationship') : a.name('name');
    const comment = a.string('comment', true);
    a.done();
    const r = findRel(ctx, findTable(ctx, table), name);
    if (comment === undefined) delete r.comment;
    else r.comment = comment;
    return SUCCESS;
  },
});
