/**
 * Table and column renames done by run_sql are carried into the metadata
 * (PostgreSQL keeps the oid/attnum; the metadata refers by name).
 */
import { sameName, type BoolExp, type Metadata, type QualifiedTable, type TableMetadata } from '../model/metadata.js';

export function renameTable(md: Metadata, oldName: QualifiedTable, to: QualifiedTable): void {
  // a copy: `oldName` may be one of the objects renamed below
  const from = { schema: oldName.schema, name: oldName.name };
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
    // `_exists` names its table
    mapPermissionExps(t, (e) => renameTableInExp(e, from, to));
  }
}

/** Replaces every boolean expression of the table's permissions (filters and checks) by `f` of it. */
function mapPermissionExps(t: TableMetadata, f: (e: BoolExp) => BoolExp): void {
  for (const p of t.select_permissions) p.permission.filter = f(p.permission.filter);
  for (const p of t.insert_permissions) p.permission.check = f(p.permission.check);
  for (const p of t.update_permissions) {
    p.permission.filter = f(p.permission.filter);
    if (p.permission.check) p.permission.check = f(p.permission.check);
  }
  for (const p of t.delete_permissions) p.permission.filter = f(p.permission.filter);
}

const isLogical = (k: string) => ['_and', '_or', '_not', '$and', '$or', '$not'].includes(k);
const isExists = (k: string) => k === '_exists' || k === '$exists';

/** Rewrites `_exists: {_table}` naming `from` at any depth (through logical operators and relationship paths). */
function renameTableInExp(e: BoolExp, from: QualifiedTable, to: QualifiedTable): BoolExp {
  if (!e || typeof e !== 'object' || Array.isArray(e)) return e;
  const out: BoolExp = {};
  for (const [k, v] of Object.entries(e)) {
    if (isLogical(k)) {
      out[k] = Array.isArray(v) ? v.map((x) => renameTableInExp(x as BoolExp, from, to)) : renameTableInExp(v as BoolExp, from, to);
    } else if (isExists(k) && v && typeof v === 'object') {
      const ex = v as { _table?: QualifiedTable | string; _where?: BoolExp };
      const t = typeof ex._table === 'string' ? { schema: 'public', name: ex._table } : ex._table;
      const table =
        t && sameName(t, from) ? (typeof ex._table === 'string' && to.schema === 'public' ? to.name : { schema: to.schema, name: to.name }) : ex._table;
      out[k] = { ...ex, _table: table, ...(ex._where !== undefined ? { _where: renameTableInExp(ex._where, from, to) } : {}) };
    } else if (k.startsWith('_') || k.startsWith('$')) {
      out[k] = v; // an operator: its value is data
    } else {
      out[k] = renameTableInExp(v as BoolExp, from, to); // a column's operators or a relationship's expression
    }
  }
  return out;
}

/** Where a relationship of a table leads (names as they are now). */
export type RelationshipTarget = (table: QualifiedTable, relationship: string) => QualifiedTable | undefined;

/**
 * Renames columns of `table` in the metadata, all at once (`renames`: old name → new name), so that
 * swapped names (a → b, b → a) stay apart.
 */
export function renameColumns(md: Metadata, table: QualifiedTable, renames: Map<string, string>, relTarget: RelationshipTarget = () => undefined): void {
  const r = (c: string) => renames.get(c) ?? c;
  const cols = (l: string[] | '*' | undefined) => (Array.isArray(l) ? l.map(r) : l);
  for (const t of md.tables) {
    const own = sameName(t.table, table);
    if (own) {
      const cfg = t.configuration;
      if (cfg?.custom_column_names) cfg.custom_column_names = renameKeys(cfg.custom_column_names, r);
      for (const rel of t.object_relationships) {
        if (typeof rel.using.foreign_key_constraint_on === 'string') rel.using.foreign_key_constraint_on = r(rel.using.foreign_key_constraint_on);
      }
      for (const p of t.select_permissions) {
        p.permission.columns = cols(p.permission.columns)!;
      }
      for (const p of t.insert_permissions) {
        p.permission.columns = cols(p.permission.columns);
        p.permission.set = renameKeys(p.permission.set, r);
      }
      for (const p of t.update_permissions) {
        p.permission.columns = cols(p.permission.columns)!;
        p.permission.set = renameKeys(p.permission.set, r);
      }
      for (const rr of t.remote_relationships) {
        rr.definition.svc_fields = rr.definition.svc_fields.map(r);
        rr.definition.remote_field = renameColumnRefs(rr.definition.remote_field, r) as Record<string, unknown>;
      }
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
    mapPermissionExps(t, (e) => renameInExp(e, t.table, table, r, relTarget));
  }
}

function renameKeys<T>(o: Record<string, T> | undefined, r: (k: string) => string): Record<string, T> | undefined {
  if (!o) return o;
  const out: Record<string, T> = {};
  for (const [k, v] of Object.entries(o)) out[r(k)] = v;
  return out;
}

function renameInExp(e: BoolExp, current: QualifiedTable, target: QualifiedTable, r: (c: string) => string, relTarget: RelationshipTarget): BoolExp {
  if (!e || typeof e !== 'object' || Array.isArray(e)) return e;
  const out: BoolExp = {};
  for (const [k, v] of Object.entries(e)) {
    if (isLogical(k) && (k === '_not' || k === '$not')) {
      out[k] = renameInExp(v as BoolExp, current, target, r, relTarget);
    } else if (isLogical(k)) {
      out[k] = Array.isArray(v) ? v.map((x) => renameInExp(x as BoolExp, current, target, r, relTarget)) : v;
    } else if (isExists(k)) {
      const ex = v as { _table?: QualifiedTable | string; _where?: BoolExp };
      const t = typeof ex?._table === 'string' ? { schema: 'public', name: ex._table } : ex?._table;
      out[k] = t ? { ...ex, _where: renameInExp(ex._where ?? {}, t, target, r, relTarget) } : v;
    } else {
      const remote = relTarget(current, k);
      if (remote) out[k] = renameInExp(v as BoolExp, remote, target, r, relTarget);
      else out[sameName(current, target) ? r(k) : k] = v;
    }
  }
  return out;
}

/** `$column` references in a remote relationship's arguments, renamed. */
function renameColumnRefs(v: unknown, r: (c: string) => string): unknown {
  if (typeof v === 'string' && v.startsWith('$')) return `$${r(v.slice(1))}`;
  if (Array.isArray(v)) return v.map((x) => renameColumnRefs(x, r));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, renameColumnRefs(x, r)]));
  return v;
}
