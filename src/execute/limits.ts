/**
 * Cheap bounds on a GraphQL document, checked after parsing and before anything walks it
 * (operation selection, field collection, planning): its size in bytes and tokens, the depth and
 * the number of fields of its selections with fragments expanded, and its aliases.
 *
 * Fragments are expanded by counting, not by copying: each fragment's field count and depth are
 * computed once (memoised), so `fragment F40 { ...F39 ...F39 }` — 2^40 fields when expanded —
 * costs forty small sums. A fragment that spreads itself is counted as empty here (field
 * collection rejects it with upstream's message). Every request document goes through this once: a
 * plan-cache hit skips it with the rest of parsing.
 */
import { Kind, parse, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode, type ValueNode } from 'graphql';
import { SvcError } from '../errors.js';

export interface DocumentLimits {
  /** nesting of argument values (objects and lists), e.g. `where: {_not: {_not: …}}` */
  maxNestingDepth?: number;
  maxQueryBytes: number;
  maxQueryTokens: number;
  maxQueryDepth: number;
  maxQueryNodes: number;
  maxQueryAliases: number;
}

export const DEFAULT_DOCUMENT_LIMITS: DocumentLimits = {
  maxQueryBytes: 1024 * 1024,
  maxQueryTokens: 20_000,
  maxQueryDepth: 100,
  maxQueryNodes: 10_000,
  maxQueryAliases: 1000,
};

const limitError = (message: string) => new SvcError(400, 'validation-failed', message, '$.query');

/** Parses a request's document within the limits (SvcError `validation-failed` past one). */
export function parseWithinLimits(query: string, limits: DocumentLimits = DEFAULT_DOCUMENT_LIMITS): DocumentNode {
  // UTF-16 length bounds the UTF-8 size from below; count bytes only when it could matter
  if (query.length > limits.maxQueryBytes || (query.length * 3 > limits.maxQueryBytes && Buffer.byteLength(query) > limits.maxQueryBytes)) {
    throw limitError(`the query document is larger than ${limits.maxQueryBytes} bytes`);
  }
  // graphql-js parses recursively: bound the nesting of braces, brackets and parentheses first
  const nesting = limits.maxQueryDepth + (limits.maxNestingDepth ?? 256);
  if (lexicalNestingExceeds(query, nesting)) throw limitError(`the query document is nested deeper than ${nesting} levels`);
  let doc: DocumentNode;
  try {
    doc = parse(query, { noLocation: true, maxTokens: limits.maxQueryTokens });
  } catch (e) {
    const m = (e as Error).message;
    if (/more tha[nt] \d+ tokens/.test(m)) throw limitError(`the query document has more than ${limits.maxQueryTokens} tokens`);
    throw new SvcError(400, 'validation-failed', `not a valid graphql query: ${m}`, '$.query');
  }
  checkDocumentLimits(doc, limits);
  return doc;
}

interface Size {
  /** fields in the selection, fragments expanded */
  nodes: number;
  /** nesting depth of fields */
  depth: number;
}

/** Depth, expanded field count and aliases of every operation and fragment of the document. */
export function checkDocumentLimits(doc: DocumentNode, limits: DocumentLimits = DEFAULT_DOCUMENT_LIMITS): void {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const memo = new Map<string, Size>();
  const maxNesting = limits.maxNestingDepth ?? 256;
  const visiting = new Set<string>();
  let aliases = 0;

  const fragmentSize = (name: string): Size => {
    const known = memo.get(name);
    if (known) return known;
    const f = fragments.get(name);
    if (!f) return { nodes: 0, depth: 0 }; // an unknown fragment is reported by field collection
    // a cycle: counted as empty here; field collection reports it with upstream's message
    if (visiting.has(name)) return { nodes: 0, depth: 0 };
    visiting.add(name);
    const s = setSize(f.selectionSet, 0);
    visiting.delete(name);
    memo.set(name, s);
    return s;
  };

  // `level` guards the recursion of the checker itself against a document nested deeper than the
  // depth limit (the parser allows any nesting within its token limit)
  const setSize = (set: SelectionSetNode, level: number): Size => {
    if (level > limits.maxQueryDepth) throw limitError(`the query is nested deeper than ${limits.maxQueryDepth} levels`);
    let nodes = 0;
    let depth = 0;
    for (const sel of set.selections) {
      let s: Size;
      if (sel.kind === Kind.FIELD) {
        if (sel.alias) aliases++;
        for (const a of sel.arguments ?? [])
          if (valueDeeperThan(a.value, maxNesting)) throw limitError(`an argument of field "${sel.name.value}" is nested deeper than ${maxNesting} levels`);
        const sub = sel.selectionSet ? setSize(sel.selectionSet, level + 1) : { nodes: 0, depth: 0 };
        s = { nodes: sub.nodes + 1, depth: sub.depth + 1 };
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        s = setSize(sel.selectionSet, level);
      } else {
        s = fragmentSize(sel.name.value);
      }
      nodes += s.nodes;
      if (s.depth > depth) depth = s.depth;
      if (nodes > limits.maxQueryNodes) throw limitError(`the query selects more than ${limits.maxQueryNodes} fields (fragments expanded)`);
    }
    if (depth > limits.maxQueryDepth) throw limitError(`the query is nested deeper than ${limits.maxQueryDepth} levels`);
    return { nodes, depth };
  };

  // aliases are counted in the text of the document (each definition once)
  for (const d of doc.definitions) {
    if (d.kind === Kind.OPERATION_DEFINITION) setSize(d.selectionSet, 0);
    else if (d.kind === Kind.FRAGMENT_DEFINITION) fragmentSize(d.name.value);
  }
  if (aliases > limits.maxQueryAliases) throw limitError(`the query has more than ${limits.maxQueryAliases} aliases`);
}

/** Is an argument value nested deeper than `max` objects/lists? Iterative (no recursion to overflow). */
function valueDeeperThan(v: ValueNode, max: number): boolean {
  const stack: Array<[ValueNode, number]> = [[v, 0]];
  while (stack.length) {
    const [x, d] = stack.pop()!;
    if (x.kind === Kind.OBJECT) {
      if (d + 1 > max) return true;
      for (const f of x.fields) stack.push([f.value, d + 1]);
    } else if (x.kind === Kind.LIST) {
      if (d + 1 > max) return true;
      for (const i of x.values) stack.push([i, d + 1]);
    }
  }
  return false;
}

/** Does `{ [ (` nesting outside strings and comments exceed `max`? One linear scan. */
export function lexicalNestingExceeds(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b || c === 0x28) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d || c === 0x29) {
      depth--;
    } else if (c === 0x23) {
      // comment to the end of the line
      while (i < text.length && text.charCodeAt(i) !== 0x0a && text.charCodeAt(i) !== 0x0d) i++;
    } else if (c === 0x22) {
      if (text.startsWith('"""', i)) {
        const end = text.indexOf('"""', i + 3);
        i = end < 0 ? text.length : end + 2;
      } else {
        for (i++; i < text.length; i++) {
          const d = text.charCodeAt(i);
          if (d === 0x5c) i++;
          else if (d === 0x22 || d === 0x0a) break;
        }
      }
    }
  }
  return false;
}
