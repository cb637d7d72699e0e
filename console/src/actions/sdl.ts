/**
 * Actions from GraphQL SDL, as upstream's console writes them: the action is one field of
 * `type Mutation { … }` or `type Query { … }`, its types are object, input, enum and scalar
 * definitions. Parsed with graphql-js in the browser into create_action's definition and
 * set_custom_types' argument, and printed back for editing. Pure functions (unit-tested under node).
 */
import { GraphQLError, Kind, parse, print, type DocumentNode, type TypeNode } from 'graphql';

export interface ActionArgument {
  name: string;
  type: string;
  description?: string;
}

export interface ParsedAction {
  name: string;
  type: 'query' | 'mutation';
  arguments: ActionArgument[];
  output_type: string;
  description?: string;
}

export interface Field {
  name: string;
  type: string;
  description?: string;
}

export interface CustomTypes {
  input_objects?: Array<{ name: string; description?: string | null; fields: Field[] }>;
  objects?: Array<{ name: string; description?: string | null; fields: Field[]; relationships?: unknown[] }>;
  scalars?: Array<{ name: string; description?: string | null }>;
  enums?: Array<{ name: string; description?: string | null; values: Array<{ value: string; description?: string | null; is_deprecated?: boolean | null }> }>;
}

export const BUILTIN_SCALARS = new Set(['Int', 'Float', 'String', 'Boolean', 'ID']);

/** The innermost named type of a type string: "[Foo!]!" → "Foo". */
export const baseType = (t: string) => t.replace(/[[\]!\s]/g, '');

function parseSdl(text: string, what: string): DocumentNode {
  try {
    return parse(text);
  } catch (e) {
    if (e instanceof GraphQLError) {
      const at = e.locations?.[0];
      throw new Error(`${what}: ${e.message.replace(/^Syntax Error: /, '')}${at ? ` (line ${at.line}, column ${at.column})` : ''}`);
    }
    throw e;
  }
}

const typeString = (t: TypeNode) => print(t);
const desc = (d: { value: string } | undefined) => (d ? { description: d.value } : {});

/** The action of `type Mutation { name(args): Output }` (or Query): exactly one field. */
export function parseActionSdl(text: string): ParsedAction {
  if (!text.trim()) throw new Error('action definition: empty');
  const doc = parseSdl(text, 'action definition');
  const defs = doc.definitions;
  const def = defs[0];
  if (defs.length !== 1 || !def || (def.kind !== Kind.OBJECT_TYPE_DEFINITION && def.kind !== Kind.OBJECT_TYPE_EXTENSION)
    || (def.name.value !== 'Mutation' && def.name.value !== 'Query')) {
    throw new Error('action definition: expected one "type Mutation { … }" or "type Query { … }"');
  }
  const fields = def.fields ?? [];
  if (fields.length !== 1) throw new Error(`action definition: expected exactly one field in ${def.name.value}, found ${fields.length}`);
  const f = fields[0]!;
  return {
    name: f.name.value,
    type: def.name.value === 'Query' ? 'query' : 'mutation',
    arguments: (f.arguments ?? []).map((a) => ({ name: a.name.value, type: typeString(a.type), ...desc(a.description) })),
    output_type: typeString(f.type),
    ...desc(f.description),
  };
}

/** The custom types of an SDL document of object, input, enum and scalar definitions. */
export function parseTypesSdl(text: string): CustomTypes {
  const out: Required<CustomTypes> = { input_objects: [], objects: [], scalars: [], enums: [] };
  if (!text.trim()) return out;
  const doc = parseSdl(text, 'type definitions');
  const seen = new Set<string>();
  for (const d of doc.definitions) {
    if (!('name' in d) || !d.name) throw new Error(`type definitions: ${d.kind} is not a custom type`);
    const name = d.name.value;
    if (seen.has(name)) throw new Error(`type definitions: ${name} is defined twice`);
    seen.add(name);
    const fields = (fs: ReadonlyArray<{ name: { value: string }; type: TypeNode; description?: { value: string } }> | undefined) =>
      (fs ?? []).map((f) => ({ name: f.name.value, type: typeString(f.type), ...desc(f.description) }));
    switch (d.kind) {
      case Kind.OBJECT_TYPE_DEFINITION:
        if (name === 'Query' || name === 'Mutation') throw new Error(`type definitions: ${name} belongs in the action definition`);
        if ((d.fields ?? []).some((f) => (f.arguments ?? []).length > 0)) throw new Error(`type definitions: fields of ${name} cannot take arguments`);
        out.objects.push({ name, ...desc(d.description), fields: fields(d.fields) });
        break;
      case Kind.INPUT_OBJECT_TYPE_DEFINITION:
        out.input_objects.push({ name, ...desc(d.description), fields: fields(d.fields) });
        break;
      case Kind.SCALAR_TYPE_DEFINITION:
        out.scalars.push({ name, ...desc(d.description) });
        break;
      case Kind.ENUM_TYPE_DEFINITION:
        out.enums.push({ name, ...desc(d.description), values: (d.values ?? []).map((v) => ({ value: v.name.value, ...desc(v.description) })) });
        break;
      default:
        throw new Error(`type definitions: ${d.kind} ${name} is not a custom type (object, input, enum or scalar)`);
    }
  }
  return out;
}

type Kinds = keyof CustomTypes;
const KINDS: Kinds[] = ['input_objects', 'objects', 'scalars', 'enums'];

/**
 * `existing` with the types of `added` put in (a type of the same name is replaced, whatever its
 * kind; an object type keeps its relationships), for set_custom_types, which replaces them all.
 */
export function mergeCustomTypes(existing: CustomTypes, added: CustomTypes): Required<CustomTypes> {
  const names = new Set(KINDS.flatMap((k) => (added[k] ?? []).map((t) => t.name)));
  const out = Object.fromEntries(KINDS.map((k) => [k, (existing[k] ?? []).filter((t) => !names.has(t.name))])) as Required<CustomTypes>;
  for (const o of added.objects ?? []) {
    const before = (existing.objects ?? []).find((x) => x.name === o.name);
    out.objects.push(before?.relationships?.length ? { ...o, relationships: before.relationships } : o);
  }
  out.input_objects.push(...(added.input_objects ?? []));
  out.scalars.push(...(added.scalars ?? []));
  out.enums.push(...(added.enums ?? []));
  return out;
}

/** The names of the custom types an action uses, directly or through fields of its types. */
export function typesUsed(action: { arguments?: ActionArgument[]; output_type: string }, types: CustomTypes): string[] {
  const all = new Map<string, { fields?: Field[] }>();
  for (const k of KINDS) for (const t of types[k] ?? []) all.set(t.name, t as { fields?: Field[] });
  const out: string[] = [];
  const visit = (type: string) => {
    const n = baseType(type);
    if (out.includes(n) || !all.has(n)) return;
    out.push(n);
    for (const f of all.get(n)!.fields ?? []) visit(f.type);
  };
  for (const a of action.arguments ?? []) visit(a.type);
  visit(action.output_type);
  return out;
}

const block = (s: string | null | undefined, indent = '') => (s ? `${indent}${JSON.stringify(s)}\n` : '');

/** SDL of the action as `type Mutation { … }` / `type Query { … }`. */
export function actionToSdl(name: string, d: { type?: string; arguments?: ActionArgument[]; output_type: string }, description?: string | null): string {
  const args = d.arguments ?? [];
  const argText = args.length === 0 ? '' : `(\n${args.map((a) => `${block(a.description, '    ')}    ${a.name}: ${a.type}`).join('\n')}\n  )`;
  return `type ${d.type === 'query' ? 'Query' : 'Mutation'} {\n${block(description, '  ')}  ${name}${argText}: ${d.output_type}\n}\n`;
}

/** SDL of the named custom types (all of them without `names`), in the order given. */
export function customTypesToSdl(types: CustomTypes, names?: string[]): string {
  const parts: Array<{ name: string; text: string }> = [];
  const fields = (fs: Field[]) => fs.map((f) => `${block(f.description, '  ')}  ${f.name}: ${f.type}`).join('\n');
  for (const t of types.objects ?? []) parts.push({ name: t.name, text: `${block(t.description)}type ${t.name} {\n${fields(t.fields)}\n}` });
  for (const t of types.input_objects ?? []) parts.push({ name: t.name, text: `${block(t.description)}input ${t.name} {\n${fields(t.fields)}\n}` });
  for (const t of types.enums ?? []) parts.push({ name: t.name, text: `${block(t.description)}enum ${t.name} {\n${t.values.map((v) => `${block(v.description, '  ')}  ${v.value}`).join('\n')}\n}` });
  for (const t of types.scalars ?? []) parts.push({ name: t.name, text: `${block(t.description)}scalar ${t.name}` });
  const chosen = names ? names.map((n) => parts.find((p) => p.name === n)).filter((p) => p !== undefined) : parts;
  return chosen.map((p) => p.text).join('\n\n') + (chosen.length ? '\n' : '');
}

/** A sample value of a GraphQL type for the handler skeleton. */
function sample(type: string, types: CustomTypes, depth = 0): string {
  const list = /^\[/.test(type.trim());
  const n = baseType(type);
  let v: string;
  const obj = (types.objects ?? []).find((t) => t.name === n);
  const en = (types.enums ?? []).find((t) => t.name === n);
  if (n === 'Int' || n === 'Float') v = '0';
  else if (n === 'Boolean') v = 'false';
  else if (n === 'ID') v = "'1'";
  else if (en) v = JSON.stringify(en.values[0]?.value ?? '').replace(/"/g, "'");
  else if (obj && depth < 3) v = `{ ${obj.fields.map((f) => `${f.name}: ${sample(f.type, types, depth + 1)}`).join(', ')} }`;
  else v = `'<${n}>'`;
  return list ? `[${v}]` : v;
}

/**
 * A Node.js/Express handler for the action (what upstream's console shows in its "Codegen" tab):
 * the request body Svc sends (action name, input, session variables) and a response of the output
 * type's shape.
 */
export function expressHandler(name: string, d: { arguments?: ActionArgument[]; output_type: string; handler?: string }, types: CustomTypes): string {
  let path = `/${name}`;
  try {
    if (d.handler) path = new URL(d.handler.replace(/\{\{[^}]*\}\}/g, 'x')).pathname || path;
  } catch {
    /* a template or not a URL: the action's name */
  }
  const args = (d.arguments ?? []).map((a) => a.name);
  return `// ${name}: an action handler for Node.js with Express (npm install express)
const express = require('express');

const app = express();
app.use(express.json());

app.post(${JSON.stringify(path)}, async (req, res) => {
  // Svc sends { action: { name }, input: { ...arguments }, session_variables: { 'x-svc-role': ..., ... } }
  const { ${args.length ? `${args.join(', ')}` : ''} } = req.body.input;
  const session = req.body.session_variables;

  // run your business logic here; to fail the call, answer 4xx:
  //   return res.status(400).json({ message: 'what went wrong' });

  // the response is the output type ${d.output_type}
  return res.json(${sample(d.output_type, types)});
});

app.listen(process.env.PORT || 3000);
`;
}
