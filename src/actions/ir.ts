/**
 * Helpers over the IR of an action root field (its types: ir/types.ts `ActionField`).
 */
import type { InputTemplate, OutputSelection } from '../ir/types.js';

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
