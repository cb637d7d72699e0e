/**
 * What a role may read of a table: the columns, relationships, computed
 * fields, aggregates, the row filter (IR) and the row limit. Admin sees
 * everything unfiltered. Relationships and computed fields leading to tables
 * the role cannot select do not exist for it.
 */
import type { BoolExp } from '../ir/types.js';
import type { ColumnModel, ComputedFieldModel, FunctionModel, RelationshipModel, SchemaCache, TableModel } from '../schema/model.js';
import { ADMIN_ROLE } from '../server/auth/session.js';
import { lookupTable, permissionFilter } from './filter.js';

export interface TableView {
  table: TableModel;
  role: string;
  columns: ColumnModel[];
  objectRelationships: RelationshipModel[];
  arrayRelationships: RelationshipModel[];
  computedFields: ComputedFieldModel[];
  allowAggregations: boolean;
  /** null: unrestricted */
  filter: BoolExp | null;
  limit: number | null;
}

/** Per-role views, built lazily (filters are converted once). */
export class RoleViews {
  private readonly views = new Map<string, TableView | null>();
  constructor(
    readonly cache: SchemaCache,
    readonly role: string,
  ) {}

  get isAdmin(): boolean {
    return this.role === ADMIN_ROLE;
  }

  view(t: TableModel | undefined): TableView | null {
    if (!t) return null;
    if (this.views.has(t.key)) return this.views.get(t.key)!;
    const v = this.build(t);
    this.views.set(t.key, v);
    if (v) this.fillRelations(v);
    return v;
  }

  canSelect(t: TableModel | undefined): boolean {
    return !!t && (this.isAdmin || !!t.permissions.get(this.role)?.select);
  }

  viewOf(key: string): TableView | null {
    return this.view(this.cache.tables.get(key));
  }

  private build(t: TableModel): TableView | null {
    if (this.isAdmin) {
      return {
        table: t,
        role: this.role,
        columns: t.columns,
        objectRelationships: [],
        arrayRelationships: [],
        computedFields: [],
        allowAggregations: true,
        filter: null,
        limit: null,
      };
    }
    const p = t.permissions.get(this.role)?.select;
    if (!p) return null;
    const allowed = new Set(p.columns);
    return {
      table: t,
      role: this.role,
      columns: t.columns.filter((c) => allowed.has(c.name)),
      objectRelationships: [],
      arrayRelationships: [],
      computedFields: [],
      allowAggregations: p.allowAggregations,
      filter: permissionFilter(this.cache, t, p.filter),
      limit: p.limit,
    };
  }

  private fillRelations(v: TableView): void {
    const t = v.table;
    const perm = this.isAdmin ? null : t.permissions.get(this.role)?.select;
    for (const rel of t.relationships.values()) {
      if (!this.canSelect(lookupTable(this.cache, rel.remoteTable))) continue;
      (rel.kind === 'object' ? v.objectRelationships : v.arrayRelationships).push(rel);
    }
    for (const cf of t.computedFields.values()) {
      if (cf.returns.kind === 'table') {
        if (this.canSelect(lookupTable(this.cache, cf.returns.table))) v.computedFields.push(cf);
      } else if (this.isAdmin || perm?.computedFields.includes(cf.name)) {
        v.computedFields.push(cf);
      }
    }
  }

  /** Functions whose returned table the role can select. */
  functions(): FunctionModel[] {
    return [...this.cache.functions.values()].filter((f) => this.canSelect(lookupTable(this.cache, f.returnTable)));
  }
}
