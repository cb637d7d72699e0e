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
 *
 * An inherited role (metadata `inherited_roles`) without a select permission of its own on a table
 * reads the union of its roles' select permissions there (Hasura v2): a row is visible when any of
 * their filters allows it; a column (or scalar computed field) is readable when any of them may read
 * it, and its value is given only for the rows that one of those roles may see — otherwise null: the
 * view's copy of the column carries that condition as `guard` (the SQL reads it as
 * `CASE WHEN guard THEN col END`) and is nullable. The limit is the largest (none if any has none),
 * aggregations are allowed when any allows them. Roles of the set that are inherited roles
 * themselves contribute their roles' permissions (flattened), or their own where they define one.
 */
import type { BoolExp, ColumnModel, ComputedFieldModel, FunctionModel, RelationshipModel, TableModel } from '../model/tables.js';
import type { QualifiedTable } from '../model/metadata.js';
import type { SchemaCache } from '../schema/model.js';
import { ADMIN_ROLE } from '../core/session.js';
import { TRUE } from '../ir/types.js';
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
/** One role's select permission on a table, as a part of an inherited role's union. */
interface SelectPart {
  filter: BoolExp;
  columns: Set<string>;
  computedFields: Set<string>;
  limit: number | null;
  allowAggregations: boolean;
}

/** A table of the schema cache by name. */
export function lookupTable(cache: SchemaCache, t: QualifiedTable): TableModel | undefined {
  return cache.tables.get(`${t.schema}.${t.name}`);
}

export class RoleViews {
  private readonly views = new Map<string, TableView | null>();
  private readonly parts = new Map<string, SelectPart[]>();
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
    return !!t && (this.isAdmin || !!t.permissions.get(this.role)?.select || this.selectParts(t).length > 0);
  }

  /**
   * The select permissions an inherited role without its own combines on `t` (empty for other
   * roles): its roles' own permissions, the roles of inherited ones flattened.
   */
  private selectParts(t: TableModel): SelectPart[] {
    const inherited = this.cache.inheritedRoles;
    if (!inherited?.has(this.role)) return [];
    let parts = this.parts.get(t.key);
    if (parts) return parts;
    parts = [];
    const seen = new Set<string>();
    const walk = (role: string, depth: number): void => {
      if (seen.has(role) || depth > inherited.size) return;
      seen.add(role);
      const p = t.permissions.get(role)?.select;
      if (p) {
        parts!.push({
          filter: p.filterExp,
          columns: new Set(p.columns),
          computedFields: new Set(p.computedFields),
          limit: p.limit,
          allowAggregations: p.allowAggregations,
        });
      } else {
        for (const r of inherited.get(role) ?? []) walk(r, depth + 1);
      }
    };
    for (const r of inherited.get(this.role)!) walk(r, 0);
    this.parts.set(t.key, parts);
    return parts;
  }

  /** The rows of `parts` whose members grant `has`: null when that is every row the union shows. */
  private static guard(parts: SelectPart[], has: (p: SelectPart) => boolean): BoolExp | null {
    const granting = parts.filter(has);
    if (granting.length === parts.length || granting.some((p) => p.filter.kind === 'true')) return null;
    return granting.length === 1 ? granting[0]!.filter : { kind: 'or', items: granting.map((p) => p.filter) };
  }

  private combined(t: TableModel, parts: SelectPart[]): TableView {
    const columns: ColumnModel[] = [];
    for (const c of t.columns) {
      if (!parts.some((p) => p.columns.has(c.name))) continue;
      const guard = RoleViews.guard(parts, (p) => p.columns.has(c.name));
      columns.push(guard ? { ...c, nullable: true, guard } : c);
    }
    const filter = parts.some((p) => p.filter.kind === 'true')
      ? TRUE
      : parts.length === 1
        ? parts[0]!.filter
        : { kind: 'or' as const, items: parts.map((p) => p.filter) };
    return {
      table: t,
      role: this.role,
      columns,
      objectRelationships: [],
      arrayRelationships: [],
      computedFields: [],
      allowAggregations: parts.some((p) => p.allowAggregations),
      filter,
      limit: parts.some((p) => p.limit === null) ? null : Math.max(...parts.map((p) => p.limit!)),
    };
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
    // the view's own (an inherited role's carries its guard)
    const mine = v.computedFields.find((x) => x === cf || (x.name === cf.name && x.table === cf.table));
    if (mine) return mine;
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
    if (!p) {
      const parts = this.selectParts(t);
      return parts.length ? this.combined(t, parts) : null;
    }
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
    const parts = this.isAdmin || perm ? [] : this.selectParts(t);
    for (const rel of t.relationships.values()) {
      if (!this.canSelect(lookupTable(this.cache, rel.remoteTable))) continue;
      (rel.kind === 'object' ? v.objectRelationships : v.arrayRelationships).push(rel);
    }
    for (const cf of t.computedFields.values()) {
      if (cf.returns.kind === 'table') {
        if (this.canSelect(lookupTable(this.cache, cf.returns.table))) v.computedFields.push(cf);
      } else if (this.isAdmin || perm?.computedFields.includes(cf.name)) {
        v.computedFields.push(cf);
      } else if (parts.some((p) => p.computedFields.has(cf.name))) {
        const guard = RoleViews.guard(parts, (p) => p.computedFields.has(cf.name));
        v.computedFields.push(guard ? { ...cf, guard } : cf);
      }
    }
  }

  /** Functions whose returned table the role can select. */
  functions(): FunctionModel[] {
    return [...this.cache.functions.values()].filter((f) => this.canSelect(lookupTable(this.cache, f.returnTable)));
  }
}
