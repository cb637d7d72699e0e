/**
 * The remote part of a query plan, built once per plan (cached with it):
 * - remote root fields grouped by remote schema: one document per remote (fragments inlined,
 *   the operation's variable definitions that the fields use), one HTTP request each;
 * - for every database root field, where its JSON holds remote relationship fields (join sites),
 *   so that execution finds them without scanning the data.
 */
import {
  Kind,
  print,
  visit,
  type ArgumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type InlineFragmentNode,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import type { CollectedField } from '../ir/document.js';
import type { AggregateField, ConnectionSelect, Field, RemoteJoinField, RootField } from '../ir/types.js';
import { SvcError } from '../errors.js';

/** The fields of one remote in one operation. */
export interface RemoteRootGroup {
  remote: string;
  /** the document sent (variables referenced, not inlined) */
  query: string;
  variables: string[];
  /** response keys of the fields, in operation order */
  aliases: string[];
}

/** How to reach the join sites in a database root field's JSON. */
export type JoinWalker = { kind: 'rows'; fields: JoinStep[] } | { kind: 'object'; fields: JoinStep[] };
export type JoinStep = { key: string; walker: JoinWalker } | { key: string; site: JoinSite };

export interface JoinSite {
  id: number;
  join: RemoteJoinField;
  /** the client's arguments (merged with the configured ones per row) and selection set (printed, fragments inlined) */
  leafArgs: readonly ArgumentNode[];
  selection: string;
  variables: string[];
}

export interface RemotePlan {
  roots: RemoteRootGroup[];
  /** database root field alias → how to find its join sites */
  joins: Map<string, JoinWalker>;
  /** the operation's variable definitions by name (printed), for the documents of joins */
  variableDefs: Map<string, string>;
  operation: 'query' | 'mutation';
}

const MAX_INLINE_DEPTH = 64;

/** A selection set with fragment spreads replaced by inline fragments. */
function inlineFragments(set: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>, depth = 0): SelectionSetNode {
  if (depth > MAX_INLINE_DEPTH) throw new SvcError(400, 'validation-failed', 'fragments nested too deeply', '$');
  const selections: SelectionNode[] = set.selections.map((s) => {
    if (s.kind === Kind.FRAGMENT_SPREAD) {
      const frag = fragments.get(s.name.value);
      if (!frag) throw new SvcError(400, 'validation-failed', `fragment ${JSON.stringify(s.name.value)} not found`, '$');
      const inline: InlineFragmentNode = {
        kind: Kind.INLINE_FRAGMENT,
        typeCondition: frag.typeCondition,
        directives: s.directives,
        selectionSet: inlineFragments(frag.selectionSet, fragments, depth + 1),
      };
      return inline;
    }
    if (s.kind === Kind.INLINE_FRAGMENT) return { ...s, selectionSet: inlineFragments(s.selectionSet, fragments, depth + 1) };
    if (s.selectionSet) return { ...s, selectionSet: inlineFragments(s.selectionSet, fragments, depth + 1) };
    return s;
  });
  return { kind: Kind.SELECTION_SET, selections };
}

/** The collected field as one field node: its first node's name/alias/arguments, every sub-selection merged. */
function fieldNode(f: CollectedField, fragments: Map<string, FragmentDefinitionNode>): FieldNode {
  const selections = f.subSelections.flatMap((s) => s.set.selections);
  return {
    kind: Kind.FIELD,
    alias: f.alias !== f.name ? { kind: Kind.NAME, value: f.alias } : undefined,
    name: f.node.name,
    arguments: f.node.arguments,
    directives: [],
    selectionSet: selections.length ? inlineFragments({ kind: Kind.SELECTION_SET, selections }, fragments) : undefined,
  };
}

function variablesOf(node: FieldNode | SelectionSetNode): string[] {
  const out = new Set<string>();
  visit(node, { Variable: (v) => void out.add(v.name.value) });
  return [...out];
}

function variableDefs(op: OperationDefinitionNode): Map<string, string> {
  return new Map((op.variableDefinitions ?? []).map((d) => [d.variable.name.value, print(d)]));
}

export function documentText(operation: 'query' | 'mutation', defs: Map<string, string>, variables: string[], body: string): string {
  const vars = variables.map((v) => defs.get(v)).filter((x): x is string => !!x);
  return `${operation}${vars.length ? ` (${vars.join(', ')})` : ''} { ${body} }`;
}

/** The remote plan of an operation's root fields, or undefined when nothing in it is remote. */
export function planRemote(op: OperationDefinitionNode, fragments: Map<string, FragmentDefinitionNode>, fields: RootField[]): RemotePlan | undefined {
  const operation = op.operation === 'mutation' ? 'mutation' : 'query';
  const defs = variableDefs(op);
  const groups = new Map<string, { nodes: FieldNode[]; aliases: string[] }>();
  const joins = new Map<string, JoinWalker>();
  let nextSite = 0;
  const site = (join: RemoteJoinField): JoinSite => {
    const node = fieldNode(join.field, fragments);
    const selection = node.selectionSet ? print(node.selectionSet) : '';
    return { id: nextSite++, join, leafArgs: node.arguments ?? [], selection, variables: variablesOf(node) };
  };
  const walkFields = (fs: Field[]): JoinStep[] => {
    const out: JoinStep[] = [];
    for (const f of fs) {
      if (f.kind === 'remote_join') out.push({ key: f.alias, site: site(f.join) });
      else if (f.kind === 'object') push(out, f.alias, 'object', walkFields(f.select.fields));
      else if (f.kind === 'array' || f.kind === 'computed_table') push(out, f.alias, 'rows', walkFields(f.select.fields));
      else if (f.kind === 'array_aggregate') push(out, f.alias, 'object', walkAggregate(f.select.fields));
      else if (f.kind === 'array_connection') push(out, f.alias, 'object', walkConnection(f.select));
    }
    return out;
  };
  // a Relay connection: {edges: [{node: {…}}]} (/v1beta1/relay)
  const walkConnection = (c: ConnectionSelect): JoinStep[] => {
    const out: JoinStep[] = [];
    for (const f of c.fields) {
      if (f.kind !== 'edges') continue;
      const edge: JoinStep[] = [];
      for (const e of f.fields) if (e.kind === 'node') push(edge, e.alias, 'object', walkFields(e.fields));
      push(out, f.alias, 'rows', edge);
    }
    return out;
  };
  const walkAggregate = (fs: AggregateField[]): JoinStep[] => {
    const out: JoinStep[] = [];
    for (const f of fs) if (f.kind === 'nodes') push(out, f.alias, 'rows', walkFields(f.fields));
    return out;
  };
  const push = (out: JoinStep[], key: string, kind: JoinWalker['kind'], steps: JoinStep[]) => {
    if (steps.length) out.push({ key, walker: { kind, fields: steps } });
  };
  for (const f of fields) {
    if (f.kind === 'remote') {
      const g = groups.get(f.remote) ?? { nodes: [], aliases: [] };
      g.nodes.push(fieldNode(f.field, fragments));
      g.aliases.push(f.alias);
      groups.set(f.remote, g);
    } else if (f.kind === 'select' || f.kind === 'select_one') {
      const steps = walkFields(f.select.fields);
      if (steps.length) joins.set(f.alias, { kind: f.kind === 'select' ? 'rows' : 'object', fields: steps });
    } else if (f.kind === 'connection') {
      const steps = walkConnection(f.select);
      if (steps.length) joins.set(f.alias, { kind: 'object', fields: steps });
    } else if (f.kind === 'aggregate') {
      const steps = walkAggregate(f.select.fields);
      if (steps.length) joins.set(f.alias, { kind: 'object', fields: steps });
    } else if (f.kind === 'mutation') {
      const steps: JoinStep[] = [];
      if (f.output.kind === 'single') steps.push(...walkFields(f.output.fields));
      else for (const o of f.output.fields) if (o.kind === 'returning') push(steps, o.alias, 'rows', walkFields(o.fields));
      if (steps.length) joins.set(f.alias, { kind: 'object', fields: steps });
    } else if (f.kind === 'action' && f.action.output) {
      // an action's output relationships to tables, whose rows may have remote relationships
      const steps: JoinStep[] = [];
      for (const o of f.action.output.fields) {
        if (o.kind === 'object' || o.kind === 'array') push(steps, o.alias, o.kind === 'object' ? 'object' : 'rows', walkFields(o.select.fields));
      }
      if (steps.length) joins.set(f.alias, { kind: f.action.output.list ? 'rows' : 'object', fields: steps });
    }
  }
  if (groups.size === 0 && joins.size === 0) return undefined;
  const roots: RemoteRootGroup[] = [...groups].map(([remote, g]) => {
    const variables = [...new Set(g.nodes.flatMap(variablesOf))];
    return { remote, query: documentText(operation, defs, variables, g.nodes.map((n) => print(n)).join(' ')), variables, aliases: g.aliases };
  });
  return { roots, joins, variableDefs: defs, operation };
}
