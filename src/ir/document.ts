/**
 * The executable document: operation selection, variables, fragments and
 * directives, and field collection (fragments inlined, `@skip`/`@include`
 * applied, fields with one response key merged) — with Hasura's error
 * messages and paths (`$.selectionSet.author.selectionSet.x`).
 */
import {
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  Kind,
  isInputType,
  print,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type TypeNode,
} from 'graphql';
import { astToJson, coerceJson, coerceLiteral, shapeOf, validationError, type InVal, type VariableScope } from './input.js';

export interface Operation {
  def: OperationDefinitionNode;
  fragments: Map<string, FragmentDefinitionNode>;
}

/** Picks the operation to run (Hasura's rules and messages). */
export function selectOperation(doc: DocumentNode, operationName: string | null | undefined): Operation {
  const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const anonymous = ops.filter((o) => !o.name);
  let def: OperationDefinitionNode | undefined;
  if (operationName) {
    if (anonymous.length > 0 && ops.length === anonymous.length) {
      throw validationError('operationName cannot be used when an anonymous operation exists in the document', '$');
    }
    def = ops.find((o) => o.name?.value === operationName);
    if (!def) throw validationError(`no such operation found in the document: ${JSON.stringify(operationName)}`, '$');
  } else {
    if (ops.length !== 1) throw validationError('exactly one operation has to be present in the document when operationName is not specified', '$');
    def = ops[0]!;
  }
  return { def, fragments };
}

function typeFromAst(schema: GraphQLSchema, node: TypeNode): GraphQLInputType | undefined {
  switch (node.kind) {
    case Kind.NON_NULL_TYPE: {
      const inner = typeFromAst(schema, node.type);
      return inner ? new GraphQLNonNull(inner) : undefined;
    }
    case Kind.LIST_TYPE: {
      const inner = typeFromAst(schema, node.type);
      return inner ? new GraphQLList(inner) : undefined;
    }
    case Kind.NAMED_TYPE: {
      const t = schema.getType(node.name.value);
      return t && isInputType(t) ? t : undefined;
    }
  }
}

function typeNodeName(node: TypeNode): string {
  return node.kind === Kind.NAMED_TYPE ? node.name.value : typeNodeName(node.type);
}

/** What a plan depends on of a variable: its whole value (as JSON text), or its shape only (see shapeOf). */
export type StructuralKey =
  | { kind: 'value'; json: string }
  | { kind: 'shape'; shape: string }
  /** what `derive` says of the value (a Relay id: its table and the kinds of its key values) */
  | { kind: 'derived'; key: string; derive: (value: unknown) => string };

/** Does a variable's value give the same key? */
export function sameKey(k: StructuralKey, value: unknown, type: GraphQLInputType | undefined): boolean {
  if (k.kind === 'value') return JSON.stringify(value ?? null) === k.json;
  if (k.kind === 'derived') return k.derive(value) === k.key;
  return !!type && shapeOf(value, type) === k.shape;
}

export interface CoercedVariables {
  values: Record<string, unknown>;
  types: Map<string, GraphQLInputType>;
}

/** Checks a request's variables against the operation's definitions (built once per operation and role schema). */
export type VariableCoercer = (given: Record<string, unknown>) => CoercedVariables;

export function variableCoercer(schema: GraphQLSchema, op: OperationDefinitionNode): VariableCoercer {
  const defs = (op.variableDefinitions ?? []).map((d) => {
    const name = d.variable.name.value;
    const type = typeFromAst(schema, d.type);
    return {
      name,
      type,
      missing: type ? undefined : `variable ${JSON.stringify(name)} is declared as ${typeNodeName(d.type)}, but the type is not found in the schema`,
      defaultValue: d.defaultValue ? astToJson(d.defaultValue, { values: {}, types: new Map(), markStructural: () => undefined, markShape: () => undefined }) : undefined,
      path: `$.variableValues.${name}`,
    };
  });
  const types = new Map<string, GraphQLInputType>();
  for (const d of defs) if (d.type) types.set(d.name, d.type);
  return (given) => {
    const values: Record<string, unknown> = {};
    for (const d of defs) {
      if (d.missing) throw validationError(d.missing, '$.variableValues');
      let v = Object.prototype.hasOwnProperty.call(given, d.name) ? given[d.name] : undefined;
      if (v === undefined) v = d.defaultValue;
      if (v === undefined) {
        if (d.type instanceof GraphQLNonNull) throw validationError(`expecting a value for non-nullable variable: ${JSON.stringify(d.name)}`, '$.variableValues');
        continue;
      }
      coerceJson(v, d.type!, d.path);
      values[d.name] = v;
    }
    return { values, types };
  };
}

export function coerceVariables(schema: GraphQLSchema, op: OperationDefinitionNode, given: Record<string, unknown>): CoercedVariables {
  return variableCoercer(schema, op)(given);
}

/** A field of a selection set after collection: every node answering one response key. */
export interface CollectedField {
  name: string;
  alias: string;
  /** the first node (arguments and directives are read from it) */
  node: FieldNode;
  /** `$.selectionSet.author` */
  path: string;
  /** the selection sets to collect for sub-fields, each with where it came from */
  subSelections: Array<{ set: SelectionSetNode; path: string; fragStack: string[] }>;
}

export class DocumentContext implements VariableScope {
  /** structural variables and the values (or shapes) the plan was built for */
  readonly structural = new Map<string, StructuralKey>();
  constructor(
    readonly schema: GraphQLSchema,
    readonly fragments: Map<string, FragmentDefinitionNode>,
    readonly values: Record<string, unknown>,
    readonly types: Map<string, GraphQLInputType>,
  ) {}

  markStructural(name: string): void {
    if (this.structural.get(name)?.kind !== 'value') this.structural.set(name, { kind: 'value', json: JSON.stringify(this.values[name] ?? null) });
  }

  markShape(name: string): void {
    if (!this.structural.has(name)) this.structural.set(name, { kind: 'shape', shape: shapeOf(this.values[name], this.types.get(name)!) });
  }

  /**
   * The plan depends on `derive(value)` of a variable only (its other parts are parameters).
   * A variable used so in two places with different `derive`s is keyed by its whole value.
   */
  markDerived(name: string, derive: (value: unknown) => string): void {
    const k = this.structural.get(name);
    if (!k) this.structural.set(name, { kind: 'derived', key: derive(this.values[name]), derive });
    else if (k.kind !== 'value' && (k.kind !== 'derived' || k.derive !== derive)) this.markStructural(name);
  }

  /**
   * Collects the fields of selection sets on one parent type. `abstract`: the field's type is
   * this interface (Relay's `node`) and `parent` the object type the value turned out to be:
   * fragments on the interface apply, fragments on its other object types are skipped.
   */
  collect(
    sets: Array<{ set: SelectionSetNode; path: string; fragStack: string[] }>,
    parent: GraphQLObjectType,
    abstract?: GraphQLInterfaceType,
  ): CollectedField[] {
    const out = new Map<string, CollectedField>();
    for (const s of sets) this.collectInto(out, s.set, `${s.path}.selectionSet`, s.fragStack, parent, abstract);
    return [...out.values()];
  }

  /** Does a fragment on type `on` apply to `parent` (true), not apply here (false), or not fit at all (throws)? */
  private fragmentApplies(on: string | undefined, parent: GraphQLObjectType, path: string, abstract?: GraphQLInterfaceType): boolean {
    if (!on || on === parent.name) return true;
    const t = this.schema.getType(on);
    if (t instanceof GraphQLInterfaceType && parent.getInterfaces().includes(t)) return true;
    if (abstract && t instanceof GraphQLObjectType && t.getInterfaces().includes(abstract)) return false;
    this.checkFragmentType(on, parent, path);
    return false;
  }

  private collectInto(
    out: Map<string, CollectedField>,
    set: SelectionSetNode,
    path: string,
    fragStack: string[],
    parent: GraphQLObjectType,
    abstract?: GraphQLInterfaceType,
  ): void {
    for (const sel of set.selections) {
      if (!this.included(sel.directives ?? [], path)) continue;
      switch (sel.kind) {
        case Kind.FIELD: {
          const alias = sel.alias?.value ?? sel.name.value;
          const fpath = `${path}.${alias}`;
          let f = out.get(alias);
          if (!f) {
            f = { name: sel.name.value, alias, node: sel, path: fpath, subSelections: [] };
            out.set(alias, f);
          } else if (f.name !== sel.name.value) {
            throw validationError(`cannot merge different fields with the same alias: ${JSON.stringify(alias)}`, fpath);
          } else if (argsKey(f.node) !== argsKey(sel)) {
            throw validationError(`cannot merge fields with different arguments under the same alias: ${JSON.stringify(alias)}`, fpath);
          }
          if (sel.selectionSet) f.subSelections.push({ set: sel.selectionSet, path: fpath, fragStack });
          break;
        }
        case Kind.INLINE_FRAGMENT: {
          if (this.fragmentApplies(sel.typeCondition?.name.value, parent, path, abstract)) {
            this.collectInto(out, sel.selectionSet, path, fragStack, parent, abstract);
          }
          break;
        }
        case Kind.FRAGMENT_SPREAD: {
          const name = sel.name.value;
          if (fragStack.includes(name)) {
            throw validationError(`cannot spread fragment ${JSON.stringify(name)} within itself via ${[...fragStack].reverse().join(',')}`, path);
          }
          const frag = this.fragments.get(name);
          if (!frag) throw validationError(`fragment ${JSON.stringify(name)} not found`, path);
          if (this.fragmentApplies(frag.typeCondition.name.value, parent, path, abstract)) {
            this.collectInto(out, frag.selectionSet, `${path}.${name}.selectionSet`, [...fragStack, name], parent, abstract);
          }
          break;
        }
      }
    }
  }

  private checkFragmentType(on: string, parent: GraphQLObjectType, path: string): void {
    const t = this.schema.getType(on);
    if (!t) throw validationError(`no such type exists in the schema: ${JSON.stringify(on)}`, path);
    throw validationError(`fragment is defined on ${JSON.stringify(on)} but used on ${JSON.stringify(parent.name)}`, path);
  }

  private included(directives: readonly import('graphql').DirectiveNode[], path: string): boolean {
    let keep = true;
    for (const d of directives) {
      const name = d.name.value;
      if (name !== 'skip' && name !== 'include') throw validationError(`unexpected directive: ${JSON.stringify(name)}`, path);
      const arg = d.arguments?.find((a) => a.name.value === 'if');
      if (!arg) throw validationError(`the required argument "if" is missing on directive ${JSON.stringify(name)}`, path);
      const v = coerceLiteral(arg.value, new GraphQLNonNull(booleanType(this.schema)), `${path}.directives.${name}.if`, this);
      let b = false;
      if (v && v.kind === 'scalar') {
        if (v.variable) this.markStructural(v.variable);
        b = v.value === true;
      }
      if (name === 'skip' && b) keep = false;
      if (name === 'include' && !b) keep = false;
    }
    return keep;
  }

  /** The arguments of a field, checked against its definition. */
  args(f: CollectedField, def: GraphQLField<unknown, unknown>): Map<string, InVal> {
    const out = new Map<string, InVal>();
    const defs = new Map<string, GraphQLArgument>(def.args.map((a) => [a.name, a]));
    for (const a of f.node.arguments ?? []) {
      const name = a.name.value;
      const ad = defs.get(name);
      const apath = `${f.path}.args.${name}`;
      if (!ad) throw validationError(`no such argument ${JSON.stringify(name)} is expected`, apath);
      const v = coerceLiteral(a.value, ad.type, apath, this);
      if (v !== undefined) out.set(name, v);
    }
    for (const ad of def.args) {
      if (ad.type instanceof GraphQLNonNull && ad.defaultValue === undefined && !out.has(ad.name)) {
        throw validationError(`the required argument ${JSON.stringify(ad.name)} is missing`, `${f.path}.args`);
      }
    }
    return out;
  }

  /** The value of a leaf at compile time (its variable, if any, becomes structural). */
  valueOf(v: InVal | undefined): unknown {
    if (!v || v.kind === 'null') return null;
    if ((v.kind === 'scalar' || v.kind === 'enum') && v.variable) this.markStructural(v.variable);
    if (v.kind === 'scalar' || v.kind === 'enum') return v.value;
    if (v.kind === 'list') return v.items.map((i) => this.valueOf(i));
    return Object.fromEntries(v.fields.map(([k, x]) => [k, this.valueOf(x)]));
  }
}

function argsKey(f: FieldNode): string {
  return (f.arguments ?? []).map((a) => `${a.name.value}:${print(a.value)}`).sort().join(',');
}

function booleanType(schema: GraphQLSchema): GraphQLInputType {
  return schema.getType('Boolean') as GraphQLInputType;
}
