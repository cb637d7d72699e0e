/**
 * What the schema cache knows about remote schemas and remote relationships (`SchemaCache.remote`;
 * built by remote/cache.ts): each remote's endpoint and introspection, and each remote
 * relationship's join columns and field path.
 */
import type { IntrospectionField, IntrospectionObjectType, IntrospectionSchema, IntrospectionType, IntrospectionTypeRef } from 'graphql';
import type { QualifiedTable, RemoteRelationshipDef } from './metadata.js';
import type { ColumnModel } from './tables.js';

/** A remote schema's definition with URL and headers resolved. */
export interface RemoteEndpoint {
  name: string;
  url: string;
  headers: Array<{ name: string; value: string }>;
  forwardClientHeaders: boolean;
  timeoutMs: number;
}

export interface RemoteSchemaModel {
  name: string;
  endpoint: RemoteEndpoint;
  intro: IntrospectionSchema;
  /** every type of the remote but the introspection types (`__*`) */
  types: Map<string, IntrospectionType>;
  query: IntrospectionObjectType;
  mutation: IntrospectionObjectType | null;
  subscription: IntrospectionObjectType | null;
  /** names of the remote's root operation types (not merged into Svc's schema) */
  rootTypes: Set<string>;
}

/** One step of a remote relationship's `remote_field` path. */
export interface RemotePathStep {
  field: string;
  /** the configured arguments (`$column` references and literals) */
  args: Record<string, unknown>;
  def: IntrospectionField;
  /** the field's type is a list (the result is mapped over it) */
  list: boolean;
}

export interface RemoteRelationshipModel {
  name: string;
  table: QualifiedTable;
  /** svc_fields, in the configured order */
  columns: ColumnModel[];
  remote: string;
  path: RemotePathStep[];
  /** the type of the last field of the path */
  leafType: IntrospectionTypeRef;
  def: RemoteRelationshipDef;
}

export interface RemoteCacheModel {
  /** the consistent remote schemas, in metadata order */
  schemas: Map<string, RemoteSchemaModel>;
  /** consistent remote relationships by table key (`schema.name`) */
  relationships: Map<string, RemoteRelationshipModel[]>;
}

export const EMPTY_REMOTE: RemoteCacheModel = { schemas: new Map(), relationships: new Map() };
