/**
 * What a role may write to a table, resolved for the IR: insertable and
 * updatable columns (preset columns excluded: their values come from the
 * permission), presets as typed values, filters and checks as IR. Admin may
 * write everything, unchecked. Backend-only insert permissions count only
 * when the request asked for them with admin credentials.
 */
import type { ColumnValue } from '../ir/types.js';
import type { BoolExp, ColumnModel, TableModel } from '../model/tables.js';
import type { SchemaCache } from '../schema/model.js';
import { ADMIN_ROLE } from '../core/session.js';
import { isSessionVariable } from './boolexp.js';
import { columnType } from './filter.js';

export interface InsertAccess {
  /** columns the input may give (presets excluded) */
  columns: ColumnModel[];
  presets: ColumnValue[];
  /** null: unchecked */
  check: BoolExp | null;
  backendOnly: boolean;
}

export interface UpdateAccess {
  /** columns the input may set (presets excluded) */
  columns: ColumnModel[];
  presets: ColumnValue[];
  /** rows that may be updated (null: all) */
  filter: BoolExp | null;
  /** condition on the updated rows (null: none) */
  check: BoolExp | null;
}

export interface DeleteAccess {
  filter: BoolExp | null;
}

/** A preset (`set` of a permission) as a typed value: a session variable or a static value. */
export function presetValue(column: ColumnModel, v: unknown): ColumnValue {
  const ref = isSessionVariable(v) ? { kind: 'session' as const, name: v.toLowerCase() } : { kind: 'literal' as const, value: v };
  return { column, value: { ref, type: columnType(column) } };
}

function presets(t: TableModel, set: Record<string, unknown>): ColumnValue[] {
  return t.columns.filter((c) => c.name in set).map((c) => presetValue(c, set[c.name]));
}

/** Per-role write access, converted once per table. */
export class RoleMutationAccess {
  private readonly memo = new Map<string, { insert: InsertAccess | null; update: UpdateAccess | null; delete: DeleteAccess | null }>();

  constructor(
    readonly cache: SchemaCache,
    readonly role: string,
    /** backend-only insert permissions apply */
    readonly backendOnly = false,
  ) {}

  get isAdmin(): boolean {
    return this.role === ADMIN_ROLE;
  }

  insert(t: TableModel): InsertAccess | null {
    return this.of(t).insert;
  }

  update(t: TableModel): UpdateAccess | null {
    return this.of(t).update;
  }

  delete(t: TableModel): DeleteAccess | null {
    return this.of(t).delete;
  }

  private of(t: TableModel) {
    let m = this.memo.get(t.key);
    if (!m) this.memo.set(t.key, (m = this.build(t)));
    return m;
  }

  private build(t: TableModel) {
    if (this.isAdmin) {
      return {
        insert: { columns: t.columns, presets: [], check: null, backendOnly: false },
        update: { columns: t.columns, presets: [], filter: null, check: null },
        delete: { filter: null },
      };
    }
    const p = t.permissions.get(this.role);
    // the backend-only switch selects which insert permissions apply, in both directions (upstream
    // v1.3): with it, only `backend_only` ones; without it, only the others
    const ins = p?.insert && p.insert.backendOnly === this.backendOnly ? p.insert : undefined;
    const upd = p?.update;
    const del = p?.delete;
    return {
      insert: ins
        ? {
            columns: t.columns.filter((c) => ins.columns.includes(c.name) && !(c.name in ins.set)),
            presets: presets(t, ins.set),
            check: ins.checkExp,
            backendOnly: ins.backendOnly,
          }
        : null,
      update: upd
        ? {
            columns: t.columns.filter((c) => upd.columns.includes(c.name) && !(c.name in upd.set)),
            presets: presets(t, upd.set),
            filter: upd.filterExp,
            check: upd.checkExp,
          }
        : null,
      delete: del ? { filter: del.filterExp } : null,
    };
  }
}
