/**
 * What a role may read of a table: the columns, relationships, computed
 * fields, aggregates, the row filter (IR) and the row limit. Admin sees
 * everything unfiltered. Relationships and computed fields leading to tables
 * the role cannot select do not exist for it.
 *
 * The `require*` methods are the one gate for what a request names (its
 * `where`, `_exists`, relationship paths, `order_by`, `distinct_on`,
 * columns): each answers the role's view or throws Hasura's
 * `permission-denied` error at the given path. Both endpoints go through
 * them; the filters the admin wrote in metadata do not (they are trusted).
 */
import type { BoolExp } from '../ir/types.js';
import type { ColumnModel, ComputedFieldModel, FunctionModel, RelationshipModel, SchemaCache, TableModel } from '../schema/model.js';
import { ADMIN_ROLE } from '../core/session.js';
import { lookupTable } from './filter.js';
import { aggregationNotAllowed, columnNotAllowed, computedFieldNotAllowed, operationNotAllowed, relationshipNotReadable, tableDisplay } from './messages.js';

export { tableDisplay };

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

  // ---- what a request may name ----------------------------------------------------

  /** A table the request reads (root, `_exists`): `select on "t" for role "r" is not allowed. <suffix>` */
  requireTable(t: TableModel, path: string, suffix = ''): TableView {
    const v = this.view(t);
    if (!v) throw operationNotAllowed('select', t.name, this.role, path, suffix);
    return v;
  }

  /** A column the request reads (compares, orders by, counts, returns). */
  requireColumn(v: TableView, name: string, path: string): ColumnModel {
    const c = v.columns.find((x) => x.name === name);
    if (c) return c;
    throw columnNotAllowed('select', this.role, name, path);
  }

  /** The target of a relationship the request follows; its filter is the target's select filter. */
  requireRelationship(v: TableView, rel: RelationshipModel, path: string): TableView {
    const target = this.view(lookupTable(this.cache, rel.remoteTable));
    if (target && v.table.relationships.get(rel.name) === rel) return target;
    throw relationshipNotReadable(this.role, rel.name, rel.remoteTable, path);
  }

  /** A scalar computed field the request compares or selects. */
  requireComputedField(v: TableView, cf: ComputedFieldModel, path: string): ComputedFieldModel {
    if (v.computedFields.includes(cf)) return cf;
    throw computedFieldNotAllowed(this.role, cf.name, path);
  }

  /** Aggregates over a table the request reads (`<rel>_aggregate`, `<t>_aggregate`). */
  requireAggregations(v: TableView, path: string): TableView {
    if (v.allowAggregations) return v;
    throw aggregationNotAllowed(this.role, v.table.name, path);
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
      filter: p.filterExp,
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
