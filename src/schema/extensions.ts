/**
 * Schema extensions: how features above the schema layer (actions, remote schemas) add fields to
 * the GraphQL schemas, one mechanism for all of them. An extension adds root fields to a role's
 * schema, fields to a table's row type, and may resolve what it needs after the pure builder (a
 * remote's introspection). The list is explicit and assembled in one place (src/extensions.ts);
 * the schema cache carries the list it was built with (`SchemaCache.extensions`), so engines of
 * one process never share it and nothing registers itself by being imported.
 */
import type { GraphQLFieldConfig } from 'graphql';
import type { Queryable } from '../db/db.js';
import type { Metadata } from '../model/metadata.js';
import type { TableView } from '../permissions/view.js';
import type { RoleSchemaBuilder } from './graphql/builder.js';
import type { SchemaCache } from './model.js';

declare module './model.js' {
  interface SchemaCache {
    /**
     * the schema extensions the cache was built with (set by schema/load.ts); declared here, not in
     * model.ts, so that the cache's type does not import the role schema builder it feeds
     */
    extensions: readonly SchemaExtension[];
  }
}

/** A root field of a role's schema: its `extensions.svc` parser returns the IR (schema/graphql/builder.ts). */
export type RootFieldConfig = GraphQLFieldConfig<unknown, unknown>;

export interface RootFields {
  /** on query_root and subscription_root */
  query?: Record<string, RootFieldConfig>;
  /** on query_root only (query actions) */
  queryOnly?: Record<string, RootFieldConfig>;
  mutation?: Record<string, RootFieldConfig>;
}

/** Root fields of a role's schema: field configs whose `extensions.svc` parser returns the IR. */
export type RootFieldProvider = (b: RoleSchemaBuilder) => RootFields;

/** Extra fields of a table's row type (remote relationships): parsers return IR `Field`s. */
export type TableFieldProvider = (b: RoleSchemaBuilder, v: TableView) => Record<string, GraphQLFieldConfig<unknown, unknown>>;

export interface SchemaExtension {
  name: string;
  rootFields?: RootFieldProvider;
  tableFields?: TableFieldProvider;
  /** after the pure builder, before the cache is used (src/schema/load.ts) */
  attach?: (cache: SchemaCache, md: Metadata, q: Queryable) => Promise<void>;
}
