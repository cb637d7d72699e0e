/**
 * Table and column renames done by run_sql are carried into the metadata
 * (PostgreSQL keeps the oid/attnum; the metadata refers by name).
 */
import { sameName, type BoolExp, type Metadata, type QualifiedTable, type TableMetadata } from './types.js';

export function renameTable(md: Metadata, from: QualifiedTable, to: QualifiedTable): void {
  const fix = (t: QualifiedTable) => {
    if (sameName(t, from)) {
      t.schema = to.schema;
      t.name = to.name;
    }
  };
  for (const t of md.tables) {
    fix(t.table);
    for (const r of t.object_relationships) if (r.using.manual_configuration) fix(r.using.manual_configuration.remote_table);
    for (const r of t.array_relationships) {
      if (r.using.manual_configuration) fix(r.using.manual_configuration.remote_table);
      if (r.using.foreign_key_constraint_on) fix(r.using.foreign_key_constraint_on.table);
    }
  }
}

/** Where a relationship of a table leads (names as they are now). */
export type RelationshipTarget = (table: QualifiedTable, relationship: string) => QualifiedTable | undefined;

export function renameColumn(md: Metadata, table: QualifiedTable, from: string, to: string, relTarget: RelationshipTarget = () => undefined): void {
  const r = (c: string) => (c === from ? to : c);
  const cols = (l: string[] | '*' | undefined) => (Array.isArray(l) ? l.map(r) : l);
  for (const t of md.tables) {
    const own = sameName(t.table, table);
    if (own) {
      const cfg = t.configuration?.custom_column_names;
      if (cfg && from in cfg) {
        cfg[to] = cfg[from]!;
        delete cfg[from];
      }
      for (const rel of t.object_relationships) {
        if (rel.using.foreign_key_constraint_on === from) rel.using.foreign_key_constraint_on = to;
      }
      for (const p of t.select_permissions) {
        p.permission.columns = cols(p.permission.columns)!;
      }
      for (const p of t.insert_permissions) {
        p.permission.columns = cols(p.permission.columns);
        p.permission.set = renameKeys(p.permission.set, from, to);
      }
      for (const p of t.update_permissions) {
        p.permission.columns = cols(p.permission.columns)!;
        p.permission.set = renameKeys(p.permission.set, from, to);
      }
      for (const rr of t.remote_relationships) rr.definition.svc_fields = rr.definition.svc_fields.map(r);
      for (const et of t.event_triggers) {
        for (const op of ['insert', 'update', 'delete'] as const) {
          const spec = et.definition[op];
          if (spec) {
            spec.columns = cols(spec.columns)!;
            if (spec.payload) spec.payload = cols(spec.payload);
          }
        }
      }
    }
    // relationships that point at the renamed column
    for (const rel of [...t.object_relationships, ...t.array_relationships] as TableMetadata['array_relationships']) {
      const mc = rel.using.manual_configuration;
      if (mc) {
        const m: Record<string, string> = {};
        for (const [l, rc] of Object.entries(mc.column_mapping)) {
          m[own ? r(l) : l] = sameName(mc.remote_table, table) ? r(rc) : rc;
        }
        mc.column_mapping = m;
      }
      const fk = rel.using.foreign_key_constraint_on;
      if (fk && typeof fk === 'object' && sameName(fk.table, table)) fk.column = r(fk.column);
    }
    // permission filters name the column directly or through relationship paths
    const fix = (e: BoolExp) => renameInExp(e, t.table, table, from, to, relTarget);
    for (const p of t.select_permissions) p.permission.filter = fix(p.permission.filter);
    for (const p of t.insert_permissions) p.permission.check = fix(p.permission.check);
    for (const p of t.update_permissions) {
      p.permission.filter = fix(p.permission.filter);
      if (p.permission.check) p.permission.check = fix(p.permission.check);
    }
    for (const p of t.delete_permissions) p.permission.filter = fix(p.permission.filter);
  }
}

function renameKeys<T>(o: Record<string, T> | undefined, from: string, to: string): Record<string, T> | undefined {
  if (!o) return o;
  const out: Record<string, T> = {};
  for (const [k, v] of Object.entries(o)) out[k === from ? to : k] = v;
  return out;
}

function renameInExp(e: BoolExp, current: QualifiedTable, target: QualifiedTable, from: string, to: string, relTarget: RelationshipTarget): BoolExp {
  if (!e || typeof e !== 'object' || Array.isArray(e)) return e;
  const out: BoolExp = {};
  for (const [k, v] of Object.entries(e)) {
    if (k === '_and' || k === '_or' || k === '$and' || k === '$or') {
      out[k] = Array.isArray(v) ? v.map((x) => renameInExp(x as BoolExp, current, target, from, to, relTarget)) : v;
    } else if (k === '_not' || k === '$not') {
      out[k] = renameInExp(v as BoolExp, current, target, from, to, relTarget);
    } else if (k === '_exists' || k === '$exists') {
      const ex = v as { _table?: QualifiedTable | string; _where?: BoolExp };
      const t = typeof ex?._table === 'string' ? { schema: 'public', name: ex._table } : ex?._table;
      out[k] = t ? { ...ex, _where: renameInExp(ex._where ?? {}, t, target, from, to, relTarget) } : v;
    } else {
      const remote = relTarget(current, k);
      if (remote) out[k] = renameInExp(v as BoolExp, remote, target, from, to, relTarget);
      else out[sameName(current, target) && k === from ? to : k] = v;
    }
  }
  return out;
}
