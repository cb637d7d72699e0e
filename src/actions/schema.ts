/**
 * Actions in a role's GraphQL schema: each action the role may use (admin: every one) is a root
 * field — a query action on query_root, a mutation on mutation_root; an asynchronous action also
 * gets `<action>(id: uuid!): <action>` on query_root and subscription_root. Custom types become
 * GraphQL types as the actions reach them; an output object's relationships to tables are fields
 * of the table's type, visible when the role may select from the table.
 */
import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  Kind,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLInputFieldConfig,
  type GraphQLInputType,
  type GraphQLOutputType,
  type TypeNode,
} from 'graphql';
import { ADMIN_ROLE } from '../core/session.js';
import { ANY_JSON_SCALAR, type InVal } from '../ir/input.js';
import type { ActionField, AsyncSelection, InputTemplate, OutputField, OutputSelection, RootField } from '../ir/types.js';
import { refOf, type RoleSchemaBuilder } from '../schema/graphql/builder.js';
import type { RootFields, SchemaExtension, RootFieldConfig } from '../schema/extensions.js';
import { parseSelectArgs, parseSelectionSet, parseTableSelection, selectArgs, tableObject, type SelectionParser } from '../schema/graphql/select.js';
import { parseTypeExpr } from '../schema/actions.js';
import type { ActionModel, CustomObjectType } from '../model/actions.js';

/** The root fields of the role's actions (`queryOnly`: not on subscription_root). */
export function actionRootFields(b: RoleSchemaBuilder): RootFields {
  const query: Record<string, RootFieldConfig> = {};
  const queryOnly: Record<string, RootFieldConfig> = {};
  const mutation: Record<string, RootFieldConfig> = {};
  for (const a of b.cache.actions.values()) {
    if (b.role !== ADMIN_ROLE && !a.roles.has(b.role)) continue;
    const args: GraphQLFieldConfigArgumentMap = {};
    for (const arg of a.arguments) args[arg.name] = { type: inputType(b, parseTypeExpr(arg.type)!), description: arg.description ?? undefined };
    const description = a.comment ?? undefined;
    const input = (
      ctx: Parameters<RootFieldConfigParser>[0],
      f: Parameters<RootFieldConfigParser>[1],
      def: Parameters<RootFieldConfigParser>[2],
    ): InputTemplate => {
      const given = ctx.args(f, def);
      return {
        kind: 'object',
        fields: a.arguments.flatMap((x): Array<[string, InputTemplate]> => (given.has(x.name) ? [[x.name, template(given.get(x.name)!)]] : [])),
      };
    };
    if (a.kind === 'asynchronous') {
      const parse: SelectionParser<RootField> = (ctx, f, def) => ({
        alias: f.alias,
        kind: 'action',
        action: { action: a, input: input(ctx, f, def), output: null },
      });
      mutation[a.name] = { type: new GraphQLNonNull(b.scalar('uuid')), description, args, extensions: { svc: parse } };
      query[a.name] = asyncQueryField(b, a);
      continue;
    }
    const type = outputType(b, a.outputType);
    const parse: SelectionParser<RootField> = (ctx, f, def) => {
      const field: ActionField = { action: a, input: input(ctx, f, def), output: outputSelection(ctx, f, a) };
      return { alias: f.alias, kind: 'action', action: field };
    };
    const conf: RootFieldConfig = { type, description, args, extensions: { svc: parse } };
    if (a.type === 'query') queryOnly[a.name] = conf;
    else mutation[a.name] = conf;
  }
  return { query, queryOnly, mutation };
}

type RootFieldConfigParser = SelectionParser<RootField>;

/** The selection on an action's output type. */
function outputSelection(ctx: Parameters<RootFieldConfigParser>[0], f: Parameters<RootFieldConfigParser>[1], a: ActionModel): OutputSelection {
  const obj = ctx.schema.getType(a.output.name) as GraphQLObjectType;
  return { list: a.outputList, fields: parseSelectionSet<OutputField>(ctx, f, obj, (alias) => ({ alias, kind: 'typename', name: obj.name })) };
}

/** An input value as a template: variables stay references (bound per request). */
function template(v: InVal): InputTemplate {
  switch (v.kind) {
    case 'null':
      return { kind: 'value', value: null };
    case 'scalar':
      return v.variable ? { kind: 'var', name: v.variable, path: v.path ?? [] } : { kind: 'value', value: v.value };
    case 'enum':
      return v.variable ? { kind: 'var', name: v.variable, path: [] } : { kind: 'value', value: v.value };
    case 'list':
      return v.variable ? { kind: 'var', name: v.variable, path: [] } : { kind: 'list', items: v.items.map(template) };
    case 'object':
      return { kind: 'object', fields: v.fields.map(([k, x]) => [k, template(x)]) };
  }
}

// ---- types ------------------------------------------------------------------------

function namedInput(b: RoleSchemaBuilder, name: string): GraphQLInputType {
  const ct = b.cache.customTypes;
  const e = ct.enums.get(name);
  if (e) return enumType(b, name);
  const io = ct.inputObjects.get(name);
  if (io) {
    return b.register(
      name,
      () =>
        new GraphQLInputObjectType({
          name,
          description: io.description ?? undefined,
          fields: () => {
            const fields: Record<string, GraphQLInputFieldConfig> = {};
            for (const f of io.fields) fields[f.name] = { type: inputType(b, parseTypeExpr(f.type)!), description: f.description ?? undefined };
            return fields;
          },
        }),
    );
  }
  if (ct.scalars.has(name)) return customScalar(b, name);
  return b.scalar(name);
}

/** A scalar of the custom types: any JSON value. */
function customScalar(b: RoleSchemaBuilder, name: string): GraphQLScalarType {
  const d = b.cache.customTypes.scalars.get(name)!;
  return b.register(name, () => new GraphQLScalarType({ name, description: d.description ?? undefined, extensions: { ...ANY_JSON_SCALAR } }));
}

function enumType(b: RoleSchemaBuilder, name: string): GraphQLEnumType {
  const e = b.cache.customTypes.enums.get(name)!;
  return b.register(name, () => {
    const values: Record<string, { description?: string; deprecationReason?: string }> = {};
    for (const v of e.values)
      values[v.value] = { description: v.description ?? undefined, deprecationReason: v.is_deprecated ? 'No longer supported' : undefined };
    return new GraphQLEnumType({ name, description: e.description ?? undefined, values });
  });
}

function inputType(b: RoleSchemaBuilder, t: TypeNode): GraphQLInputType {
  if (t.kind === Kind.NON_NULL_TYPE) return new GraphQLNonNull(inputType(b, t.type));
  if (t.kind === Kind.LIST_TYPE) return new GraphQLList(inputType(b, t.type));
  return namedInput(b, t.name.value);
}

function wrapOutput(b: RoleSchemaBuilder, t: TypeNode): GraphQLOutputType {
  if (t.kind === Kind.NON_NULL_TYPE) return new GraphQLNonNull(wrapOutput(b, t.type));
  if (t.kind === Kind.LIST_TYPE) return new GraphQLList(wrapOutput(b, t.type));
  const name = t.name.value;
  const ct = b.cache.customTypes;
  const obj = ct.objects.get(name);
  if (obj) return outputObject(b, obj);
  if (ct.enums.has(name)) return enumType(b, name);
  if (ct.scalars.has(name)) return customScalar(b, name);
  return b.scalar(name);
}

function outputType(b: RoleSchemaBuilder, expr: string): GraphQLOutputType {
  return wrapOutput(b, parseTypeExpr(expr)!);
}

function outputObject(b: RoleSchemaBuilder, obj: CustomObjectType): GraphQLObjectType {
  return b.register(
    obj.name,
    () =>
      new GraphQLObjectType({
        name: obj.name,
        description: obj.description ?? undefined,
        fields: () => {
          const out: Record<string, GraphQLFieldConfig<unknown, unknown>> = {};
          for (const f of obj.fields) {
            const parse: SelectionParser<OutputField> = (_ctx, sf) => ({ alias: sf.alias, kind: 'field', name: f.name });
            out[f.name] = { type: wrapOutput(b, parseTypeExpr(f.type)!), description: f.description ?? undefined, extensions: { svc: parse } };
          }
          for (const rel of obj.relationships) {
            const rv = b.remoteView(rel);
            if (!rv) continue;
            const tobj = tableObject(b, rv);
            if (rel.kind === 'object') {
              const parse: SelectionParser<OutputField> = (ctx, sf) => ({
                alias: sf.alias,
                kind: 'object',
                rel,
                select: {
                  source: { kind: 'table', table: rv.table },
                  filter: rv.filter,
                  permLimit: null,
                  args: { where: null, orderBy: [], distinctOn: null, limit: null, offset: null },
                  fields: parseTableSelection(ctx, sf, tobj),
                },
              });
              out[rel.name] = { type: tobj, extensions: { svc: parse } };
            } else {
              const parse: SelectionParser<OutputField> = (ctx, sf, def) => ({
                alias: sf.alias,
                kind: 'array',
                rel,
                select: {
                  source: { kind: 'table', table: rv.table },
                  filter: rv.filter,
                  permLimit: rv.limit,
                  args: parseSelectArgs(b, ctx, rv, sf, ctx.args(sf, def)),
                  fields: parseTableSelection(ctx, sf, tobj),
                },
              });
              out[rel.name] = { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(tobj))), args: selectArgs(b, rv), extensions: { svc: parse } };
            }
          }
          return out;
        },
      }),
  );
}

/** `<action>(id: uuid!)`: the call's state in the action log, readable by the session that made it. */
function asyncQueryField(b: RoleSchemaBuilder, a: ActionModel): RootFieldConfig {
  const outType = outputType(b, a.outputType);
  const nullableOut = outType instanceof GraphQLNonNull ? (outType.ofType as GraphQLOutputType) : outType;
  type P = SelectionParser<AsyncSelection[number]>;
  const obj = b.register(
    a.name,
    () =>
      new GraphQLObjectType({
        name: a.name,
        description: a.comment ?? undefined,
        fields: () => ({
          id: { type: new GraphQLNonNull(b.scalar('uuid')), extensions: { svc: ((_c, f) => ({ alias: f.alias, kind: 'id' })) as P } },
          created_at: { type: new GraphQLNonNull(b.scalar('timestamptz')), extensions: { svc: ((_c, f) => ({ alias: f.alias, kind: 'created_at' })) as P } },
          errors: { type: b.scalar('json'), extensions: { svc: ((_c, f) => ({ alias: f.alias, kind: 'errors' })) as P } },
          output: { type: nullableOut, extensions: { svc: ((ctx, f) => ({ alias: f.alias, kind: 'output', output: outputSelection(ctx, f, a) })) as P } },
        }),
      }),
  );
  const parse: SelectionParser<RootField> = (ctx, f, def) => {
    const id = ctx.args(f, def).get('id')!;
    const fields = parseSelectionSet<AsyncSelection[number]>(ctx, f, obj, (alias) => ({ alias, kind: 'typename', name: obj.name }));
    const admin = b.role === ADMIN_ROLE;
    return { alias: f.alias, kind: 'action_log', action: a.name, id: refOf(id), fields, admin };
  };
  return { type: obj, description: a.comment ?? undefined, args: { id: { type: new GraphQLNonNull(b.scalar('uuid')) } }, extensions: { svc: parse } };
}

/** Actions as a schema extension (src/schema/extensions.ts): their root fields. */
export const actionsExtension: SchemaExtension = { name: 'actions', rootFields: actionRootFields };
