/**
 * The schema cache: metadata resolved against the database, immutable, built
 * once per metadata change (`schema/build.ts`). Everything a request needs to
 * know about tables, columns, relationships and permissions is here; the
 * per-role GraphQL schemas hang off it and are built lazily, once per role.
 */
import type { DbIntrospection } from '../model/introspection.js';
import type { ActionModel, CustomTypesModel } from '../model/actions.js';
import type { Metadata } from '../model/metadata.js';
import type { Dependency, FunctionModel, InconsistentObject, TableModel } from '../model/tables.js';
import type { RemoteCacheModel } from '../model/remote.js';

import type { RestRouter } from '../rest/endpoints.js';

export interface SchemaCache {
  resourceVersion: number;
  metadata: Metadata;
  db: DbIntrospection;
  tables: Map<string, TableModel>;
  functions: Map<string, FunctionModel>;
  inconsistent: InconsistentObject[];
  dependencies: Dependency[];
  /** every role named by a permission (admin excluded), and the inherited roles */
  roles: Set<string>;
  /** inherited role → its role set (metadata `inherited_roles`; acyclic: checked when added) */
  inheritedRoles: Map<string, string[]>;
  /** lazily built per-role artefacts (GraphQL schema etc.), keyed by role */
  perRole: Map<string, unknown>;
  /** custom types (empty when inconsistent) and the consistent actions */
  customTypes: CustomTypesModel;
  actions: Map<string, ActionModel>;
  /** the consistent REST endpoints (src/rest/endpoints.ts) */
  rest: RestRouter;
  /** remote schemas and remote relationships (src/remote/cache.ts), set by its extension's attach */
  remote?: RemoteCacheModel;
  // `extensions`: the schema extensions the cache was built with, declared by schema/extensions.ts
}
