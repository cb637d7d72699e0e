/**
 * Actions and custom types as the schema cache holds them: the metadata's `custom_types` and
 * `actions` resolved (schema/actions.ts), their relationships to tracked tables included.
 */
import type { TypeNode } from 'graphql';
import type { RelationshipModel } from './tables.js';

export interface CustomField {
  name: string;
  type: string;
  /** `type` parsed (undefined: not a type expression); an action's answer is checked against it on every call */
  typeNode?: TypeNode;
  description: string | null;
  /** the type is non-null */
  required: boolean;
}

export interface CustomObjectType {
  name: string;
  description: string | null;
  fields: CustomField[];
  /** relationships to tracked tables: `mapping` is object field → remote column */
  relationships: RelationshipModel[];
}

export interface CustomInputType {
  name: string;
  description: string | null;
  fields: CustomField[];
}

export interface CustomEnumType {
  name: string;
  description: string | null;
  values: Array<{ value: string; description: string | null; is_deprecated: boolean }>;
}

/** The custom types of the metadata, resolved (empty when they are inconsistent). */
export interface CustomTypesModel {
  scalars: Map<string, { name: string; description: string | null }>;
  enums: Map<string, CustomEnumType>;
  inputObjects: Map<string, CustomInputType>;
  objects: Map<string, CustomObjectType>;
}

export interface HeaderConf {
  name: string;
  value?: string;
  value_from_env?: string;
}

export interface ActionModel {
  name: string;
  type: 'mutation' | 'query';
  kind: 'synchronous' | 'asynchronous';
  arguments: Array<{ name: string; type: string; description: string | null }>;
  /** the output type expression (`UserId!`, `[UserId]`) and its object type */
  outputType: string;
  output: CustomObjectType;
  outputList: boolean;
  /** the output type is non-null */
  outputRequired: boolean;
  /** values of the enums the output type's fields use (a handler's answer is checked against them) */
  outputEnums: Map<string, Set<string>>;
  /** the handler URL, `{{ENV}}` templates unresolved */
  handler: string;
  headers: HeaderConf[];
  forwardClientHeaders: boolean;
  timeoutSec: number;
  /** roles the action is visible to (admin always sees it) */
  roles: Set<string>;
  comment: string | null;
}
