/**
 * The OpenAPI 3.0 document of the REST endpoints (Hasura v2's `/api/swagger/json`, Server/OpenAPI.hs):
 * one path per URL template (`authors/:id` → `/api/rest/authors/{id}`), one operation per method;
 * the query's variables as path parameters (the template's), query parameters (the other scalar and
 * enum variables) and a JSON request body (POST, PUT, PATCH); the 200 response's schema follows the
 * query's selection over the admin role's GraphQL schema (nullability, lists, aliases, the JSON the
 * engine returns for each scalar); errors are `{path, error, code}`. Input objects and enums are
 * components referenced by name (input types may be recursive, e.g. `author_bool_exp`).
 * Built once per schema cache, when first asked for.
 */
import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  Kind,
  typeFromAST,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import type { Config } from '../config/config.js';
import { ADMIN_ROLE } from '../core/session.js';
import { getRoleSchema, roleSchemaPending } from '../schema/graphql/schema.js';
import type { SchemaCache } from '../schema/model.js';
import { VERSION } from '../version.js';
import { templateVariables, type RestEndpoint } from './endpoints.js';

type Schema = Record<string, unknown>;
const ERROR_SCHEMA = 'SvcRestError';

const STRING_SCALARS = new Set(['String', 'ID', 'text', 'citext', 'bpchar', 'varchar', 'uuid', 'date', 'timestamp', 'timestamptz', 'time', 'timetz', 'money']);

/** The JSON an input scalar takes (what a parameter's text is read as). */
function inputScalar(name: string): Schema {
  switch (name) {
    case 'Int':
    case 'smallint':
      return { type: 'integer' };
    case 'bigint':
      return { type: 'integer', format: 'int64' };
    case 'Float':
    case 'float8':
    case 'numeric':
      return { type: 'number' };
    case 'Boolean':
      return { type: 'boolean' };
    case 'uuid':
      return { type: 'string', format: 'uuid' };
    case 'json':
    case 'jsonb':
      return {};
    case 'geometry':
    case 'geography':
      return { type: 'object' };
    default:
      return { type: 'string' };
  }
}

/** The JSON the engine answers for an output scalar. */
function outputScalar(name: string, stringify: boolean): Schema {
  switch (name) {
    case 'Int':
    case 'smallint':
      return { type: 'integer' };
    case 'bigint':
      return stringify ? { type: 'string' } : { type: 'integer' };
    case 'float8':
    case 'numeric':
      return stringify ? { type: 'string' } : { type: 'number' };
    case 'Float':
      return { type: 'number' };
    case 'Boolean':
      return { type: 'boolean' };
    case 'geometry':
    case 'geography':
      return { type: 'object' };
    default:
      return STRING_SCALARS.has(name) ? { type: 'string' } : {};
  }
}

/** `schema` that also admits null (OpenAPI 3.0: `nullable`; a reference is wrapped in allOf). */
function orNull(s: Schema): Schema {
  if (Object.keys(s).length === 0) return s;
  if ('$ref' in s) return { allOf: [s], nullable: true };
  return { ...s, nullable: true };
}

function valueJson(v: ValueNode): unknown {
  switch (v.kind) {
    case Kind.NULL:
      return null;
    case Kind.INT:
      return Number(v.value);
    case Kind.FLOAT:
      return Number(v.value);
    case Kind.STRING:
    case Kind.ENUM:
      return v.value;
    case Kind.BOOLEAN:
      return v.value;
    case Kind.LIST:
      return v.values.map(valueJson);
    case Kind.OBJECT:
      return Object.fromEntries(v.fields.map((f) => [f.name.value, valueJson(f.value)]));
    case Kind.VARIABLE:
      return null;
  }
}

class Builder {
  readonly components: Record<string, Schema> = {};
  constructor(
    private readonly schema: GraphQLSchema | undefined,
    private readonly stringify: boolean,
  ) {}

  /** the schema of an input type; input objects and enums become components */
  input(t: GraphQLInputType): Schema {
    if (t instanceof GraphQLNonNull) return this.inputInner(t.ofType as GraphQLInputType);
    return orNull(this.inputInner(t));
  }

  private inputInner(t: GraphQLInputType): Schema {
    if (t instanceof GraphQLList) return { type: 'array', items: this.input(t.ofType as GraphQLInputType) };
    if (t instanceof GraphQLEnumType) {
      if (!this.components[t.name])
        this.components[t.name] = { type: 'string', enum: t.getValues().map((v) => v.name), ...(t.description ? { description: t.description } : {}) };
      return { $ref: `#/components/schemas/${t.name}` };
    }
    if (t instanceof GraphQLInputObjectType) {
      if (!this.components[t.name]) {
        const target: Schema = { type: 'object' };
        this.components[t.name] = target; // before the fields: input types may refer to themselves
        const properties: Record<string, Schema> = {};
        const required: string[] = [];
        for (const f of Object.values(t.getFields())) {
          properties[f.name] = this.input(f.type);
          if (f.type instanceof GraphQLNonNull && f.defaultValue === undefined) required.push(f.name);
        }
        target.properties = properties;
        if (required.length) target.required = required;
        if (t.description) target.description = t.description;
      }
      return { $ref: `#/components/schemas/${t.name}` };
    }
    return inputScalar((t as GraphQLScalarType).name);
  }

  /** the schema of a variable's type, from its type in the query (unknown types: any JSON) */
  variable(ep: RestEndpoint, name: string): { schema: Schema; scalar: boolean; required: boolean; default?: unknown } {
    const def = ep.operation.variableDefinitions!.find((d) => d.variable.name.value === name)!;
    const required = def.type.kind === Kind.NON_NULL_TYPE && !def.defaultValue;
    const dflt = def.defaultValue ? valueJson(def.defaultValue) : undefined;
    const t = this.schema ? typeFromAST(this.schema, def.type) : undefined;
    if (!t) return { schema: {}, scalar: false, required, default: dflt };
    const inner = t instanceof GraphQLNonNull ? t.ofType : t;
    const scalar = inner instanceof GraphQLScalarType || inner instanceof GraphQLEnumType;
    return { schema: this.input(t as GraphQLInputType), scalar, required, default: dflt };
  }

  /** the schema of a selection's JSON */
  output(t: GraphQLOutputType, sel: SelectionSetNode | undefined, doc: DocumentNode): Schema {
    if (t instanceof GraphQLNonNull) return this.outputInner(t.ofType as GraphQLOutputType, sel, doc);
    return orNull(this.outputInner(t, sel, doc));
  }

  private outputInner(t: GraphQLOutputType, sel: SelectionSetNode | undefined, doc: DocumentNode): Schema {
    if (t instanceof GraphQLList) return { type: 'array', items: this.output(t.ofType as GraphQLOutputType, sel, doc) };
    if (t instanceof GraphQLScalarType) return outputScalar(t.name, this.stringify);
    if (t instanceof GraphQLEnumType) return { type: 'string', enum: t.getValues().map((v) => v.name) };
    if (t instanceof GraphQLObjectType && sel) return this.object(t, sel, doc);
    return {}; // interfaces and unions (remote schemas): any JSON
  }

  object(t: GraphQLObjectType, sel: SelectionSetNode, doc: DocumentNode): Schema {
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    const fields = t.getFields();
    const walk = (set: SelectionSetNode, conditional: boolean) => {
      for (const s of set.selections) {
        const cond = conditional || (s.directives ?? []).some((d) => d.name.value === 'skip' || d.name.value === 'include');
        if (s.kind === Kind.FIELD) {
          const key = s.alias?.value ?? s.name.value;
          const f = fields[s.name.value];
          properties[key] = s.name.value === '__typename' ? { type: 'string' } : f ? this.output(f.type, s.selectionSet, doc) : {};
          if (!cond && !required.includes(key)) required.push(key);
        } else if (s.kind === Kind.INLINE_FRAGMENT) {
          if (!s.typeCondition || s.typeCondition.name.value === t.name) walk(s.selectionSet, cond);
        } else {
          const frag = doc.definitions.find((d) => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === s.name.value);
          if (frag && frag.kind === Kind.FRAGMENT_DEFINITION && frag.typeCondition.name.value === t.name) walk(frag.selectionSet, cond);
        }
      }
    };
    walk(sel, false);
    return { type: 'object', properties, ...(required.length ? { required } : {}) };
  }
}

/** `/api/rest/authors/{id}` for `authors/:id` */
export const openApiPath = (ep: RestEndpoint): string => `/api/rest/${ep.segments.map((s) => ('variable' in s ? `{${s.variable}}` : s.literal)).join('/')}`;

const memo = new WeakMap<SchemaCache, Record<string, unknown>>();

export async function openApiDocument(cache: SchemaCache, config: Config): Promise<Record<string, unknown>> {
  const hit = memo.get(cache);
  if (hit) return hit;
  let schema: GraphQLSchema | undefined;
  try {
    await roleSchemaPending(cache, ADMIN_ROLE);
    schema = getRoleSchema(cache, ADMIN_ROLE).schema;
  } catch {
    schema = undefined; // types unknown: parameters and responses are any JSON
  }
  const b = new Builder(schema, config.stringifyNumericTypes);
  const paths: Record<string, Record<string, unknown>> = {};
  const ids = new Set<string>();
  for (const ep of cache.rest.endpoints) {
    const inPath = new Set(templateVariables(ep.segments));
    const vars = (ep.operation.variableDefinitions ?? []).map((d) => d.variable.name.value);
    const parameters: Schema[] = [];
    const bodyProps: Record<string, Schema> = {};
    for (const v of vars) {
      const info = b.variable(ep, v);
      const schemaWithDefault = info.default !== undefined && !('$ref' in info.schema) ? { ...info.schema, default: info.default } : info.schema;
      if (inPath.has(v)) {
        parameters.push({ name: v, in: 'path', required: true, schema: info.schema });
        continue;
      }
      if (info.scalar) {
        parameters.push({
          name: v,
          in: 'query',
          required: false,
          ...(info.required ? { description: `"${v}" is required: give it here or in the request body` } : {}),
          schema: schemaWithDefault,
        });
      }
      bodyProps[v] = schemaWithDefault;
    }
    const root = !schema ? undefined : ep.operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
    const response = root ? b.object(root, ep.operation.selectionSet, ep.document) : {};
    const description = `${ep.comment ? `${ep.comment}\n***\n` : ''}The GraphQL query for this endpoint is:\n\`\`\`graphql\n${ep.query}\n\`\`\``;
    const item = (paths[openApiPath(ep)] ??= {});
    const methods = [...ep.methods];
    for (const m of methods) {
      let id = methods.length === 1 ? ep.name : `${ep.name}_${m.toLowerCase()}`;
      while (ids.has(id)) id += '_';
      ids.add(id);
      const op: Schema = {
        summary: ep.name,
        description,
        operationId: id,
        parameters,
        responses: {
          '200': { description: `the data of ${ep.name}`, content: { 'application/json': { schema: response } } },
          default: { description: 'an error', content: { 'application/json': { schema: { $ref: `#/components/schemas/${ERROR_SCHEMA}` } } } },
        },
      };
      if ((m === 'POST' || m === 'PUT' || m === 'PATCH') && Object.keys(bodyProps).length) {
        op.requestBody = {
          description: 'the variables of the query, also accepted as query parameters',
          required: false,
          content: { 'application/json': { schema: { type: 'object', properties: bodyProps } } },
        };
      }
      item[m.toLowerCase()] = op;
    }
  }
  b.components[ERROR_SCHEMA] = {
    type: 'object',
    properties: { path: { type: 'string' }, error: { type: 'string' }, code: { type: 'string' }, internal: {} },
    required: ['path', 'error', 'code'],
  };
  const doc = {
    openapi: '3.0.3',
    info: { title: 'Rest Endpoints', description: 'This OpenAPI specification is automatically generated by Svc.', version: VERSION },
    paths,
    components: {
      schemas: b.components,
      securitySchemes: {
        adminSecret: { type: 'apiKey', in: 'header', name: 'x-svc-admin-secret' },
        bearerJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      },
    },
    security: [{}, { adminSecret: [] }, { bearerJwt: [] }],
  };
  memo.set(cache, doc);
  return doc;
}
