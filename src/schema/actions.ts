/**
 * Actions and custom types resolved against the database and each other (part of the schema
 * cache): what the role schemas expose and what the executor calls. An action whose types are
 * missing or whose handler/header variables are unset is an inconsistent object, not a crash.
 */
import { Kind, parseType, type TypeNode } from 'graphql';
import { MAX_TIMEOUT_SEC } from '../core/limits.js';
import type { ActionMetadata, CustomTypes, QualifiedTable } from '../model/metadata.js';
import type { InconsistentObject, RelationshipModel, TableModel } from '../model/tables.js';
import type { ActionModel, CustomEnumType, CustomField, CustomTypesModel, HeaderConf } from '../model/actions.js';
import { SvcError } from '../errors.js';
import { parseActionDefinition } from './actionDefinition.js';
import { envNotSet, unsetVariables } from '../env.js';

export const BUILTIN_SCALARS = new Set(['Int', 'Float', 'String', 'Boolean', 'ID']);

export const DEFAULT_ACTION_TIMEOUT_SEC = 30;

export function emptyCustomTypes(): CustomTypesModel {
  return { scalars: new Map(), enums: new Map(), inputObjects: new Map(), objects: new Map() };
}

export const baseTypeName = (t: TypeNode): string => (t.kind === Kind.NAMED_TYPE ? t.name.value : baseTypeName(t.type));
export const isListTypeNode = (t: TypeNode): boolean => (t.kind === Kind.NON_NULL_TYPE ? isListTypeNode(t.type) : t.kind === Kind.LIST_TYPE);

/** Parses a GraphQL type expression; undefined when it does not parse. */
export function parseTypeExpr(s: string): TypeNode | undefined {
  try {
    return parseType(s);
  } catch {
    return undefined;
  }
}

const asTable = (t: QualifiedTable | string): QualifiedTable =>
  typeof t === 'string' ? { schema: 'public', name: t } : { schema: t.schema ?? 'public', name: t.name };

/** Custom types (already validated by schema/customTypes.ts) as a model. */
export function resolveCustomTypes(ct: CustomTypes, lookup: (t: QualifiedTable) => TableModel | undefined): CustomTypesModel {
  const m = emptyCustomTypes();
  type Raw = {
    name: string;
    description?: string | null;
    fields?: Array<{ name: string; type: string; description?: string | null }>;
    values?: CustomEnumType['values'];
  };
  const fields = (o: Raw): CustomField[] =>
    (o.fields ?? []).map((f) => {
      const typeNode = parseTypeExpr(f.type);
      return { name: f.name, type: f.type, typeNode, description: f.description ?? null, required: typeNode?.kind === Kind.NON_NULL_TYPE };
    });
  for (const s of (ct.scalars ?? []) as Raw[]) m.scalars.set(s.name, { name: s.name, description: s.description ?? null });
  for (const e of (ct.enums ?? []) as Raw[]) {
    m.enums.set(e.name, {
      name: e.name,
      description: e.description ?? null,
      values: (e.values ?? []).map((v) => ({ value: v.value, description: v.description ?? null, is_deprecated: !!v.is_deprecated })),
    });
  }
  for (const i of (ct.input_objects ?? []) as Raw[]) m.inputObjects.set(i.name, { name: i.name, description: i.description ?? null, fields: fields(i) });
  type RawRel = { name: string; type: string; remote_table: QualifiedTable | string; field_mapping: Record<string, string> };
  for (const o of (ct.objects ?? []) as Array<Raw & { relationships?: RawRel[] | null }>) {
    const relationships: RelationshipModel[] = [];
    for (const r of o.relationships ?? []) {
      const remote = lookup(asTable(r.remote_table));
      if (!remote) continue;
      relationships.push({
        name: r.name,
        kind: r.type === 'array' ? 'array' : 'object',
        // the "table" of a custom object relationship is the object type (its fields are the columns)
        table: { schema: '', name: o.name },
        remoteTable: remote.name,
        mapping: Object.entries(r.field_mapping ?? {}),
        viaLocalForeignKey: false,
        comment: null,
      });
    }
    m.objects.set(o.name, { name: o.name, description: o.description ?? null, fields: fields(o), relationships });
  }
  return m;
}

class ActionProblem extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/**
 * The consistent actions; the others are pushed to `inconsistent` (with upstream's messages:
 * `the type: "X" is not an object type defined in custom types`).
 */
export function resolveActions(
  actions: ActionMetadata[],
  types: CustomTypesModel,
  pgScalars: Set<string>,
  inconsistent: InconsistentObject[],
  /** GraphQL type names the tables already use (`user`, `hge_tests_author`) */
  tableTypes: Set<string> = new Set(),
  env: NodeJS.ProcessEnv = process.env,
): Map<string, ActionModel> {
  const out = new Map<string, ActionModel>();
  for (const a of actions) {
    try {
      if (typeof a.name !== 'string' || !/^[_A-Za-z][_0-9A-Za-z]*$/.test(a.name))
        throw new ActionProblem(`${JSON.stringify(a.name)} is not a valid GraphQL name`, 'parse-failed');
      if (out.has(a.name)) throw new ActionProblem('multiple declarations exist for the action', 'already-exists');
      let definition: Record<string, unknown>;
      try {
        definition = parseActionDefinition(a.definition, '$.definition');
      } catch (e) {
        if (e instanceof SvcError) throw new ActionProblem(`${e.message} (at ${e.path})`, e.code);
        throw e;
      }
      const m = resolveAction({ ...a, definition }, types, pgScalars, env);
      for (const name of [m.output.name, ...m.arguments.map((x) => baseTypeName(parseTypeExpr(x.type)!))]) {
        if (tableTypes.has(name)) throw new ActionProblem(`the custom type ${JSON.stringify(name)} has the name of a table's GraphQL type`, 'invalid-params');
      }
      out.set(a.name, m);
    } catch (e) {
      if (!(e instanceof ActionProblem)) throw e;
      inconsistent.push({ definition: a, reason: `in action ${JSON.stringify(a.name)}; ${e.message}`, type: 'action' });
    }
  }
  return out;
}

function resolveAction(a: ActionMetadata, types: CustomTypesModel, pgScalars: Set<string>, env: NodeJS.ProcessEnv): ActionModel {
  const d = a.definition as {
    arguments?: Array<{ name: string; type: string; description?: string | null }> | null;
    output_type: string;
    type?: string;
    kind?: string;
    handler: string;
    headers?: HeaderConf[] | null;
    forward_client_headers?: boolean;
    timeout?: number;
  };
  const args = d.arguments ?? [];
  for (const arg of args) {
    const t = parseTypeExpr(arg.type);
    const base = t ? baseTypeName(t) : arg.type;
    const ok = t && (BUILTIN_SCALARS.has(base) || types.scalars.has(base) || types.enums.has(base) || types.inputObjects.has(base) || pgScalars.has(base));
    if (!ok)
      throw new ActionProblem(`the type: ${JSON.stringify(base)} is not defined in custom types or it is not a scalar/enum/input_object`, 'invalid-params');
  }
  const ot = parseTypeExpr(d.output_type);
  const outBase = ot ? baseTypeName(ot) : d.output_type;
  const output = types.objects.get(outBase);
  if (!ot || !output) throw new ActionProblem(`the type: ${JSON.stringify(outBase)} is not an object type defined in custom types`, 'not-exists');
  const problems: string[] = [];
  for (const name of unsetVariables({ template: d.handler, headers: d.headers ?? undefined }, env)) problems.push(envNotSet(name).message);
  if (problems.length) throw new ActionProblem(problems[0]!, 'not-exists');
  const outputEnums = new Map<string, Set<string>>();
  for (const f of output.fields) {
    const t = parseTypeExpr(f.type);
    const e = t ? types.enums.get(baseTypeName(t)) : undefined;
    if (e) outputEnums.set(e.name, new Set(e.values.map((v) => v.value)));
  }
  const type = d.type === 'query' ? 'query' : 'mutation';
  return {
    name: a.name,
    type,
    kind: type === 'mutation' && d.kind === 'asynchronous' ? 'asynchronous' : 'synchronous',
    arguments: args.map((x) => ({ name: x.name, type: x.type, description: x.description ?? null })),
    outputType: d.output_type,
    output,
    outputList: isListTypeNode(ot),
    outputRequired: ot.kind === Kind.NON_NULL_TYPE,
    outputEnums,
    handler: d.handler,
    headers: d.headers ?? [],
    forwardClientHeaders: !!d.forward_client_headers,
    timeoutSec: typeof d.timeout === 'number' && d.timeout > 0 ? Math.min(d.timeout, MAX_TIMEOUT_SEC) : DEFAULT_ACTION_TIMEOUT_SEC,
    roles: new Set((Array.isArray(a.permissions) ? a.permissions : []).map((p) => p?.role).filter((r): r is string => typeof r === 'string')),
    comment: a.comment ?? null,
  };
}
