/**
 * The IR of an action root field: the handler's input (literals and references to GraphQL
 * variables, bound per request) and the selection on the output object type (its fields, and its
 * relationships to tables as Select IR with the role's permissions folded in).
 */
import type { CompiledSql } from '../sql/ast.js';
import type { RelationshipModel } from '../model/tables.js';
import type { Select } from '../ir/types.js';
import type { ActionModel } from '../model/actions.js';

/** A JSON value with holes for variables. */
export type InputTemplate =
  | { kind: 'value'; value: unknown }
  | { kind: 'var'; name: string; path: (string | number)[] }
  | { kind: 'list'; items: InputTemplate[] }
  | { kind: 'object'; fields: Array<[string, InputTemplate]> };

export type OutputField =
  /** a scalar or enum field of the object, read from the handler's response */
  | { alias: string; kind: 'field'; name: string }
  | { alias: string; kind: 'typename'; name: string }
  /** a relationship to a table: `rel.mapping` is object field → remote column */
  | { alias: string; kind: 'object' | 'array'; rel: RelationshipModel; select: Select };

export interface OutputSelection {
  fields: OutputField[];
  /** the output type is a list of objects */
  list: boolean;
}

/** A synchronous action call, or the call that queues an asynchronous one. */
export interface ActionField {
  action: ActionModel;
  input: InputTemplate;
  /** null for an asynchronous action's mutation (it answers the action id) */
  output: OutputSelection | null;
  /** the statement resolving the output's relationships (compiled at first use; null: none) */
  compiled?: CompiledSql | null;
}

export function hasRelationships(sel: OutputSelection): boolean {
  return sel.fields.some((f) => f.kind === 'object' || f.kind === 'array');
}

/** The input with the request's variables filled in. */
export function fillInput(t: InputTemplate, variables: Record<string, unknown>): unknown {
  switch (t.kind) {
    case 'value':
      return t.value;
    case 'var': {
      let cur: unknown = variables[t.name];
      for (const k of t.path) cur = cur === null || cur === undefined ? undefined : (cur as Record<string | number, unknown>)[k];
      return cur ?? null;
    }
    case 'list':
      return t.items.map((x) => fillInput(x, variables));
    case 'object': {
      const o: Record<string, unknown> = {};
      for (const [k, v] of t.fields) o[k] = fillInput(v, variables);
      return o;
    }
  }
}
