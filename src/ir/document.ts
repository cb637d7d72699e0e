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
import { astToJson, coerceJson, coerceLiteral, shapeOf, type InVal, type VariableScope } from './input.js';
import * as M from './messages.js';
import { jsonText } from '../json.js';

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
      throw M.operationNameWithAnonymous();
    }
    def = ops.find((o) => o.name?.value === operationName);
    if (!def) throw M.noSuchOperation(operationName);
  } else {
    if (ops.length !== 1) throw M.exactlyOneOperation();
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
  /**
   * what `derive` says of the value (a Relay id: its table and the kinds of its key values); `of`:
   * the caller's derive, which `derive` may wrap (to tell a null apart: nullable variables)
   */
  | { kind: 'derived'; key: string; derive: (value: unknown) => string; of: (value: unknown) => string };

/** Does a variable's value give the same key? */
export function sameKey(k: StructuralKey, value: unknown, type: GraphQLInputType | undefined): boolean {
  if (k.kind === 'value') return jsonText(value ?? null) === k.json;
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
    const named = typeNodeName(d.type);
    return {
      name,
      type,
      // upstream (Validate.hs getAnnVarVals): an unknown type, or an output type
      missing: type ? undefined : schema.getType(named) ? () => M.variableOfObjectType(named) : () => M.noSuchType(named, '$.variableValues'),
      defaultValue: d.defaultValue
        ? astToJson(d.defaultValue, { values: {}, types: new Map(), markStructural: () => undefined, markShape: () => undefined })
        : undefined,
      path: `$.variableValues.${name}`,
    };
  });
  const names = defs.map((d) => d.name);
  const twice = [...new Set(names.filter((n, i) => names.indexOf(n) !== i))];
  const types = new Map<string, GraphQLInputType>();
  for (const d of defs) if (d.type) types.set(d.name, d.type);
  return (given) => {
    if (twice.length) throw M.variablesDefinedMoreThanOnce(twice);
    const unexpected = Object.keys(given).filter((k) => !types.has(k) && !names.includes(k));
    if (unexpected.length) throw M.unexpectedVariables(unexpected);
    const values: Record<string, unknown> = {};
    for (const d of defs) {
      if (d.missing) throw d.missing();
      let v = Object.prototype.hasOwnProperty.call(given, d.name) ? given[d.name] : undefined;
      if (v === undefined) v = d.defaultValue;
      if (v === undefined) {
        if (d.type instanceof GraphQLNonNull) throw M.missingVariable(d.name, String(d.type));
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

/** a shape that only says whether a scalar is null (shapeOf's `n` and `s`) */
const isScalarShape = (shape: string): boolean => shape === 'n' || shape === 's';

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
    if (this.structural.get(name)?.kind !== 'value') this.structural.set(name, { kind: 'value', json: jsonText(this.values[name] ?? null) });
  }

  markShape(name: string): void {
    const k = this.structural.get(name);
    if (!k) this.structural.set(name, { kind: 'shape', shape: shapeOf(this.values[name], this.types.get(name)!) });
    // a scalar's shape is whether it is null: a derived key takes that in
    else if (k.kind === 'derived' && k.derive === k.of && isScalarShape(shapeOf(this.values[name], this.types.get(name)!))) this.setDerived(name, k.of, true);
  }

  private setDerived(name: string, of: (value: unknown) => string, nullness: boolean): void {
    const derive = nullness ? (v: unknown) => (v === null || v === undefined ? 'n' : `s:${of(v)}`) : of;
    this.structural.set(name, { kind: 'derived', key: derive(this.values[name]), derive, of });
  }

  /**
   * The plan depends on `derive(value)` of a variable only (its other parts are parameters).
   * A variable used so in two places with different `derive`s is keyed by its whole value.
   */
  markDerived(name: string, derive: (value: unknown) => string): void {
    const k = this.structural.get(name);
    if (!k) this.setDerived(name, derive, false);
    // a scalar keyed by whether it is null (markShape): the derived key with that in it
    else if (k.kind === 'shape' && isScalarShape(k.shape)) this.setDerived(name, derive, true);
    else if (k.kind !== 'value' && (k.kind !== 'derived' || k.of !== derive)) this.markStructural(name);
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

  /**
   * Does a fragment on type `on` apply to `parent` (true), not apply here (false: a fragment on
   * another implementation of the `abstract` interface), or not fit at all (throws)?
   */
  private fragmentApplies(on: string | undefined, parent: GraphQLObjectType, setPath: string, path: string, abstract?: GraphQLInterfaceType): boolean {
    if (!on || on === parent.name) return true;
    const t = this.schema.getType(on);
    if (t instanceof GraphQLInterfaceType && parent.getInterfaces().includes(t)) return true;
    if (abstract && t instanceof GraphQLObjectType && t.getInterfaces().includes(abstract)) return false;
    this.checkFragmentType(on, parent, setPath, path);
    return false;
  }

  /**
   * Upstream's paths (SelectionSet.hs): a field's errors at
   * `<set>.<field>`, a fragment spread's at `<set>.<fragment>`, an inline
   * fragment's at `<set>.inlineFragment`, directives under `<owner>.directives.<name>`;
   * fields merged under one alias are checked at the selection set.
   */
  private collectInto(
    out: Map<string, CollectedField>,
    set: SelectionSetNode,
    path: string,
    fragStack: string[],
    parent: GraphQLObjectType,
    abstract?: GraphQLInterfaceType,
  ): void {
    for (const sel of set.selections) {
      switch (sel.kind) {
        case Kind.FIELD: {
          const alias = sel.alias?.value ?? sel.name.value;
          const fpath = `${path}.${sel.name.value}`;
          if (!this.included(sel.directives ?? [], fpath)) continue;
          let f = out.get(alias);
          if (!f) {
            f = { name: sel.name.value, alias, node: sel, path: fpath, subSelections: [] };
            out.set(alias, f);
          } else if (f.name !== sel.name.value) {
            throw M.mergeDifferentFields(alias, [f.name, sel.name.value], path);
          } else if (argsKey(f.node) !== argsKey(sel)) {
            throw M.mergeDifferentArguments(alias, path);
          }
          if (sel.selectionSet) f.subSelections.push({ set: sel.selectionSet, path: fpath, fragStack });
          break;
        }
        case Kind.INLINE_FRAGMENT: {
          const ipath = `${path}.inlineFragment`;
          if (!this.fragmentApplies(sel.typeCondition?.name.value, parent, path, ipath, abstract)) break;
          if (!this.included(sel.directives ?? [], ipath)) continue;
          this.collectInto(out, sel.selectionSet, path, fragStack, parent, abstract);
          break;
        }
        case Kind.FRAGMENT_SPREAD: {
          const name = sel.name.value;
          if (fragStack.includes(name)) throw M.fragmentCycle(name, [...fragStack].reverse(), path);
          const frag = this.fragments.get(name);
          if (!frag) throw M.fragmentNotFound(name, path);
          const fpath = `${path}.${name}`;
          if (!this.fragmentApplies(frag.typeCondition.name.value, parent, path, fpath, abstract)) break;
          if (!this.included(sel.directives ?? [], fpath)) continue;
          this.collectInto(out, frag.selectionSet, `${fpath}.selectionSet`, [...fragStack, name], parent, abstract);
          break;
        }
      }
    }
  }

  private checkFragmentType(on: string, parent: GraphQLObjectType, setPath: string, path: string): void {
    const t = this.schema.getType(on);
    if (!t) throw M.noSuchType(on, setPath);
    if (!(t instanceof GraphQLObjectType)) throw M.fragmentsOnlyOnComposite(setPath);
    throw M.fragmentSpreadMismatch(on, parent.name, path);
  }

  /** `@skip`/`@include` (SelectionSet.hs withDirectives); `owner` is the path of what they stand on. */
  private included(directives: readonly import('graphql').DirectiveNode[], owner: string): boolean {
    if (directives.length === 0) return true;
    const path = `${owner}.directives`;
    const names = directives.map((d) => d.name.value);
    const twice = [...new Set(names.filter((n, i) => names.indexOf(n) !== i))];
    if (twice.length) throw M.directivesUsedMoreThanOnce(twice, path);
    let keep = true;
    for (const d of directives) {
      const name = d.name.value;
      const dpath = `${path}.${name}`;
      if (name !== 'skip' && name !== 'include') throw M.unexpectedDirective(name, dpath);
      const given = (d.arguments ?? []).map((a) => a.name.value);
      const twiceArgs = [...new Set(given.filter((n, i) => given.indexOf(n) !== i))];
      if (twiceArgs.length) throw M.argumentsDefinedMoreThanOnce(twiceArgs, `${dpath}.args`);
      const other = given.find((n) => n !== 'if');
      if (other !== undefined) throw M.noSuchArgument(other, `${dpath}.args.${other}`);
      const arg = d.arguments?.find((a) => a.name.value === 'if');
      if (!arg) throw M.requiredArgumentMissing('if', `${dpath}.args`);
      const v = coerceLiteral(arg.value, new GraphQLNonNull(booleanType(this.schema)), `${dpath}.args.if`, this);
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
    const given = (f.node.arguments ?? []).map((a) => a.name.value);
    const twice = [...new Set(given.filter((n, i) => given.indexOf(n) !== i))];
    if (twice.length) throw M.argumentsDefinedMoreThanOnce(twice, `${f.path}.args`);
    for (const a of f.node.arguments ?? []) {
      const name = a.name.value;
      const ad = defs.get(name);
      const apath = `${f.path}.args.${name}`;
      if (!ad) throw M.noSuchArgument(name, apath);
      const v = coerceLiteral(a.value, ad.type, apath, this);
      if (v !== undefined) out.set(name, v);
    }
    for (const ad of def.args) {
      if (ad.type instanceof GraphQLNonNull && ad.defaultValue === undefined && !out.has(ad.name)) {
        throw M.requiredArgumentMissing(ad.name, `${f.path}.args`);
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
  return (f.arguments ?? [])
    .map((a) => `${a.name.value}:${print(a.value)}`)
    .sort()
    .join(',');
}

function booleanType(schema: GraphQLSchema): GraphQLInputType {
  return schema.getType('Boolean') as GraphQLInputType;
}
