/**
 * The config-v2 metadata directory (reference: migrations/reference/metadata-format.rst): one
 * YAML file per kind of object, the actions' and custom types' GraphQL in actions.graphql.
 *
 *   version.yaml           version: 2
 *   tables.yaml            tables (relationships, permissions, event triggers, computed fields, …)
 *   functions.yaml         functions
 *   remote_schemas.yaml    remote_schemas
 *   query_collections.yaml query_collections
 *   allow_list.yaml        allowlist
 *   actions.yaml           actions (handler, kind, headers, permissions, …) and custom_types (names,
 *                          object relationships)
 *   actions.graphql        the actions' arguments and output types (as fields of `type Query` and
 *                          `type Mutation`), the custom types' fields, values and descriptions
 *   cron_triggers.yaml     cron_triggers (those with include_in_metadata, as export_metadata)
 *   rest_endpoints.yaml    rest_endpoints (Hasura v2's file of the same name)
 *   inherited_roles.yaml   inherited_roles (Hasura v2's file; beyond v1.3's format)
 *
 * `renderMetadata` and `parseMetadataFiles` are inverse on what export_metadata returns; what a
 * file cannot carry (an explicit `description: null`, `is_deprecated: false`) is reported by
 * `roundTripLoss` so that `metadata export` can say so.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { METADATA_KEY_ORDER } from '../document/export.js';
import {
  GraphQLError,
  Kind,
  parse,
  parseType,
  print,
  type ConstDirectiveNode,
  type DefinitionNode,
  type DocumentNode,
  type EnumValueDefinitionNode,
  type FieldDefinitionNode,
  type InputValueDefinitionNode,
  type StringValueNode,
  type TypeNode,
} from 'graphql';
import { actionWithoutSdl, actionWithoutYaml, fileError, metadataShape, missingDir, sdlError, typeWithoutSdl } from './messages.js';
import { parseYaml, toYaml } from './yamlio.js';

export type MetadataDoc = Record<string, unknown>;

/** list files: file name → key of the metadata document */
const LIST_FILES: ReadonlyArray<readonly [string, string]> = [
  ['tables.yaml', 'tables'],
  ['functions.yaml', 'functions'],
  ['remote_schemas.yaml', 'remote_schemas'],
  ['query_collections.yaml', 'query_collections'],
  ['allow_list.yaml', 'allowlist'],
  ['cron_triggers.yaml', 'cron_triggers'],
  ['rest_endpoints.yaml', 'rest_endpoints'],
  ['inherited_roles.yaml', 'inherited_roles'],
];

export const METADATA_FILES = [
  'version.yaml',
  'tables.yaml',
  'functions.yaml',
  'remote_schemas.yaml',
  'query_collections.yaml',
  'allow_list.yaml',
  'actions.yaml',
  'actions.graphql',
  'cron_triggers.yaml',
  'rest_endpoints.yaml',
  'inherited_roles.yaml',
] as const;

/** files written only when their part of the metadata is set (issue 36: `api_limits`) */
export const OPTIONAL_METADATA_FILES = ['api_limits.yaml'] as const;

const CT_KINDS = ['input_objects', 'objects', 'scalars', 'enums'] as const;
type CtKind = (typeof CT_KINDS)[number];
/** the definition keys actions.graphql carries */
const SDL_DEF_KEYS = new Set(['arguments', 'output_type', 'type']);
const DEF_ORDER = ['arguments', 'output_type', 'headers', 'forward_client_headers', 'handler', 'type', 'kind', 'timeout'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

// ---- metadata → files ------------------------------------------------------------------------

export function renderMetadata(md: MetadataDoc): Map<string, string> {
  const files = new Map<string, string>();
  files.set('version.yaml', toYaml({ version: md.version ?? 2 }));
  for (const [file, key] of LIST_FILES) files.set(file, toYaml(list(md[key])));
  const { yaml, graphql } = renderActions(list(md.actions), isObj(md.custom_types) ? md.custom_types : {});
  files.set('actions.yaml', yaml);
  files.set('actions.graphql', graphql);
  const out = new Map<string, string>(METADATA_FILES.map((f) => [f, files.get(f)!]));
  if (isObj(md.api_limits)) out.set('api_limits.yaml', toYaml(md.api_limits));
  return out;
}

function renderActions(actions: unknown[], customTypes: Obj): { yaml: string; graphql: string } {
  const yamlActions = actions.map((a) => {
    if (!isObj(a)) return a;
    const out: Obj = {};
    for (const [k, v] of Object.entries(a)) {
      if (k === 'definition' && isObj(v)) {
        const def: Obj = {};
        for (const [dk, dv] of Object.entries(v)) if (!SDL_DEF_KEYS.has(dk)) def[dk] = dv;
        out.definition = def;
      } else out[k] = v;
    }
    return out;
  });
  const yamlTypes: Obj = {};
  for (const k of ['enums', 'input_objects', 'objects', 'scalars'] as const) {
    yamlTypes[k] = list(customTypes[k]).map((t) => {
      if (!isObj(t)) return t;
      const o: Obj = { name: t.name };
      if (k === 'objects' && t.relationships !== undefined && t.relationships !== null) o.relationships = t.relationships;
      return o;
    });
  }
  const yaml = toYaml({ actions: yamlActions, custom_types: yamlTypes });

  const defs: DefinitionNode[] = [];
  for (const root of ['query', 'mutation'] as const) {
    const fields = actions.filter((a) => isObj(a) && isObj(a.definition) && (a.definition.type ?? 'mutation') === root).map((a) => actionField(a as Obj));
    if (fields.length) defs.push({ kind: Kind.OBJECT_TYPE_DEFINITION, name: nameNode(root === 'query' ? 'Query' : 'Mutation'), fields });
  }
  for (const t of list(customTypes.input_objects)) {
    if (!isObj(t)) continue;
    defs.push({
      kind: Kind.INPUT_OBJECT_TYPE_DEFINITION,
      name: nameNode(String(t.name)),
      ...desc(t.description),
      fields: list(t.fields)
        .filter(isObj)
        .map((f) => inputValue(f)),
    });
  }
  for (const t of list(customTypes.objects)) {
    if (!isObj(t)) continue;
    defs.push({
      kind: Kind.OBJECT_TYPE_DEFINITION,
      name: nameNode(String(t.name)),
      ...desc(t.description),
      fields: list(t.fields)
        .filter(isObj)
        .map((f): FieldDefinitionNode => ({ kind: Kind.FIELD_DEFINITION, name: nameNode(String(f.name)), ...desc(f.description), type: typeNode(f.type) })),
    });
  }
  for (const t of list(customTypes.enums)) {
    if (!isObj(t)) continue;
    defs.push({
      kind: Kind.ENUM_TYPE_DEFINITION,
      name: nameNode(String(t.name)),
      ...desc(t.description),
      values: list(t.values)
        .filter(isObj)
        .map((v): EnumValueDefinitionNode => ({
          kind: Kind.ENUM_VALUE_DEFINITION,
          name: nameNode(String(v.value)),
          ...desc(v.description),
          ...(v.is_deprecated === true ? { directives: [deprecated] } : {}),
        })),
    });
  }
  for (const t of list(customTypes.scalars)) {
    if (!isObj(t)) continue;
    defs.push({ kind: Kind.SCALAR_TYPE_DEFINITION, name: nameNode(String(t.name)), ...desc(t.description) });
  }
  const doc: DocumentNode = { kind: Kind.DOCUMENT, definitions: defs };
  return { yaml, graphql: defs.length ? `${print(doc)}\n` : '' };
}

const deprecated: ConstDirectiveNode = { kind: Kind.DIRECTIVE, name: { kind: Kind.NAME, value: 'deprecated' } };
const nameNode = (value: string) => ({ kind: Kind.NAME, value }) as const;
function desc(d: unknown): { description?: StringValueNode } {
  return typeof d === 'string' ? { description: { kind: Kind.STRING, value: d, block: d.includes('\n') } } : {};
}
function typeNode(t: unknown): TypeNode {
  try {
    return parseType(String(t));
  } catch {
    // not a GraphQL type: written as a name, reported by the round-trip check
    return { kind: Kind.NAMED_TYPE, name: nameNode(String(t).replace(/[^_0-9A-Za-z]/g, '_') || '_') };
  }
}
function inputValue(f: Obj): InputValueDefinitionNode {
  return { kind: Kind.INPUT_VALUE_DEFINITION, name: nameNode(String(f.name)), ...desc(f.description), type: typeNode(f.type) };
}
function actionField(a: Obj): FieldDefinitionNode {
  const d = a.definition as Obj;
  return {
    kind: Kind.FIELD_DEFINITION,
    name: nameNode(String(a.name)),
    arguments: list(d.arguments)
      .filter(isObj)
      .map((x) => inputValue(x)),
    type: typeNode(d.output_type),
  };
}

// ---- files → metadata ------------------------------------------------------------------------

export function parseMetadataFiles(files: ReadonlyMap<string, string | undefined>): MetadataDoc {
  const yamlOf = (file: string): unknown => {
    const text = files.get(file);
    return text === undefined ? undefined : parseYaml(text, file);
  };
  const md: MetadataDoc = {};
  const v = yamlOf('version.yaml');
  if (v !== undefined && v !== null) {
    if (!isObj(v)) throw metadataShape('version.yaml', 'a mapping with "version"', v);
    md.version = v.version;
  } else md.version = 2;
  for (const [file, key] of LIST_FILES) {
    const l = yamlOf(file);
    if (l === undefined || l === null) continue;
    if (!Array.isArray(l)) throw metadataShape(file, 'a list', l);
    if (l.length) md[key] = l;
  }
  const ay = yamlOf('actions.yaml');
  if (ay !== undefined && ay !== null && !isObj(ay)) throw metadataShape('actions.yaml', 'a mapping with "actions" and "custom_types"', ay);
  const { actions, customTypes } = parseActions((ay as Obj | undefined) ?? {}, files.get('actions.graphql') ?? '');
  if (Object.keys(customTypes).length) md.custom_types = customTypes;
  if (actions.length) md.actions = actions;
  const limits = yamlOf('api_limits.yaml');
  if (limits !== undefined && limits !== null) {
    if (!isObj(limits)) throw metadataShape('api_limits.yaml', "a mapping (set_api_limits's arguments)", limits);
    md.api_limits = limits;
  }
  const ordered: MetadataDoc = {};
  for (const k of METADATA_KEY_ORDER) if (md[k] !== undefined) ordered[k] = md[k];
  return ordered;
}

interface SdlAction {
  root: 'query' | 'mutation';
  arguments: Obj[];
  output_type: string;
}

function sdlDescription(n: { description?: StringValueNode | undefined }): Obj {
  return n.description ? { description: n.description.value } : {};
}

function parseActions(yaml: Obj, sdl: string): { actions: Obj[]; customTypes: Obj } {
  let doc: DocumentNode | undefined;
  if (sdl.trim()) {
    try {
      doc = parse(sdl, { noLocation: false });
    } catch (e) {
      const g = e as GraphQLError;
      const at = g.locations?.[0];
      throw sdlError('actions.graphql', `${at ? `${at.line}:${at.column}: ` : ''}${g.message}`);
    }
  }
  const sdlActions = new Map<string, SdlAction>();
  const sdlTypes: Record<CtKind, Map<string, Obj>> = { input_objects: new Map(), objects: new Map(), scalars: new Map(), enums: new Map() };
  const at = (n: { loc?: { startToken: { line: number; column: number } } | undefined }) =>
    n.loc ? `${n.loc.startToken.line}:${n.loc.startToken.column}: ` : '';
  for (const d of doc?.definitions ?? []) {
    switch (d.kind) {
      case Kind.OBJECT_TYPE_DEFINITION:
      case Kind.OBJECT_TYPE_EXTENSION: {
        const name = d.name.value;
        if (name === 'Query' || name === 'Mutation') {
          for (const f of d.fields ?? []) {
            if (sdlActions.has(f.name.value)) throw sdlError('actions.graphql', `${at(f)}action ${JSON.stringify(f.name.value)} is defined more than once`);
            sdlActions.set(f.name.value, {
              root: name === 'Query' ? 'query' : 'mutation',
              arguments: (f.arguments ?? []).map((x) => ({ name: x.name.value, type: print(x.type), ...sdlDescription(x) })),
              output_type: print(f.type),
            });
          }
        } else {
          if (d.kind === Kind.OBJECT_TYPE_EXTENSION)
            throw sdlError('actions.graphql', `${at(d)}"extend type ${name}": only Query and Mutation may be extended`);
          add(sdlTypes.objects, name, d, {
            name,
            ...sdlDescription(d),
            fields: (d.fields ?? []).map((f) => ({ name: f.name.value, type: print(f.type), ...sdlDescription(f) })),
          });
        }
        break;
      }
      case Kind.INPUT_OBJECT_TYPE_DEFINITION:
        add(sdlTypes.input_objects, d.name.value, d, {
          name: d.name.value,
          ...sdlDescription(d),
          fields: (d.fields ?? []).map((f) => ({ name: f.name.value, type: print(f.type), ...sdlDescription(f) })),
        });
        break;
      case Kind.ENUM_TYPE_DEFINITION:
        add(sdlTypes.enums, d.name.value, d, {
          name: d.name.value,
          ...sdlDescription(d),
          values: (d.values ?? []).map((v) => ({
            value: v.name.value,
            ...sdlDescription(v),
            ...((v.directives ?? []).some((x) => x.name.value === 'deprecated') ? { is_deprecated: true } : {}),
          })),
        });
        break;
      case Kind.SCALAR_TYPE_DEFINITION:
        add(sdlTypes.scalars, d.name.value, d, { name: d.name.value, ...sdlDescription(d) });
        break;
      default:
        throw sdlError(
          'actions.graphql',
          `${at(d)}${d.kind} is not supported here: actions.graphql holds type Query / type Mutation (the actions), and the custom types (type, input, enum, scalar)`,
        );
    }
  }
  function add(m: Map<string, Obj>, name: string, node: { loc?: { startToken: { line: number; column: number } } | undefined }, value: Obj) {
    for (const other of Object.values(sdlTypes))
      if (other.has(name)) throw sdlError('actions.graphql', `${at(node)}type ${JSON.stringify(name)} is defined more than once`);
    m.set(name, value);
  }

  // actions: actions.yaml order; each needs its field in actions.graphql and the other way round
  const yActions = yaml.actions ?? [];
  if (!Array.isArray(yActions)) throw metadataShape('actions.yaml', '"actions" to be a list', yActions);
  const actions: Obj[] = [];
  const seen = new Set<string>();
  yActions.forEach((a, i) => {
    if (!isObj(a) || typeof a.name !== 'string') throw fileError('actions.yaml', `actions[${i}] needs a "name"`);
    const s = sdlActions.get(a.name);
    if (!s) throw actionWithoutSdl(a.name);
    seen.add(a.name);
    const yDef = isObj(a.definition) ? a.definition : {};
    const merged: Obj = { ...yDef, arguments: s.arguments, output_type: s.output_type, type: s.root };
    const def: Obj = {};
    for (const k of DEF_ORDER) if (merged[k] !== undefined) def[k] = merged[k];
    for (const [k, v] of Object.entries(merged)) if (!(k in def)) def[k] = v;
    const out: Obj = {};
    for (const [k, v] of Object.entries(a)) out[k] = k === 'definition' ? def : v;
    if (!('definition' in out)) out.definition = def;
    actions.push(out);
  });
  for (const name of sdlActions.keys()) if (!seen.has(name)) throw actionWithoutYaml(name);

  // custom types: actions.yaml's listing order, then types only in actions.graphql
  const yTypes = yaml.custom_types ?? {};
  if (!isObj(yTypes)) throw metadataShape('actions.yaml', '"custom_types" to be a mapping', yTypes);
  const customTypes: Obj = {};
  for (const k of CT_KINDS) {
    const listed = yTypes[k] ?? [];
    if (!Array.isArray(listed)) throw metadataShape('actions.yaml', `"custom_types.${k}" to be a list`, listed);
    const out: Obj[] = [];
    const used = new Set<string>();
    listed.forEach((t, i) => {
      const name = isObj(t) ? t.name : t;
      if (typeof name !== 'string') throw fileError('actions.yaml', `custom_types.${k}[${i}] needs a "name"`);
      const s = sdlTypes[k].get(name);
      if (!s) throw typeWithoutSdl(k, name);
      used.add(name);
      out.push(k === 'objects' && isObj(t) && t.relationships !== undefined && t.relationships !== null ? { ...s, relationships: t.relationships } : s);
    });
    for (const [name, s] of sdlTypes[k]) if (!used.has(name)) out.push(s);
    if (out.length) customTypes[k] = out;
  }
  return { actions, customTypes };
}

// ---- directories and files -------------------------------------------------------------------

/** The files of a metadata directory (absent files: undefined). */
export function readMetadataDir(dir: string): Map<string, string | undefined> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw missingDir('metadata', dir);
  const names = new Set(readdirSync(dir));
  if (!names.has('version.yaml'))
    throw fileError(dir, 'not a metadata directory: it has no version.yaml (export the metadata into it first: svc metadata export)');
  return new Map([...METADATA_FILES, ...OPTIONAL_METADATA_FILES].map((f) => [f, names.has(f) ? readFileSync(join(dir, f), 'utf8') : undefined]));
}

/** A metadata directory, or one JSON/YAML file holding the whole document (export_metadata's output). */
export function readMetadataSource(path: string, label = path): MetadataDoc {
  if (existsSync(path) && statSync(path).isDirectory()) return parseMetadataFiles(readMetadataDir(path));
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw fileError(label, (e as Error).message);
  }
  const doc = parseYaml(text, label); // JSON is YAML
  if (!isObj(doc)) throw metadataShape(label, 'a metadata document (a mapping with version, tables, …)', doc);
  return doc;
}

/** Where render → parse does not give back `md`: the first path that differs (undefined: none). */
export function roundTripLoss(md: MetadataDoc): string | undefined {
  let back: MetadataDoc;
  try {
    back = parseMetadataFiles(renderMetadata(md));
  } catch (e) {
    return `$ (${(e as Error).message})`;
  }
  return firstDifference(normalizeEmpty(md), back, '$');
}

/** export_metadata leaves empty lists out; so does parseMetadataFiles: compare on that footing */
function normalizeEmpty(md: MetadataDoc): MetadataDoc {
  const out: MetadataDoc = {};
  for (const [k, v] of Object.entries(md)) if (!(Array.isArray(v) && v.length === 0)) out[k] = v;
  if (out.version === undefined) out.version = 2;
  return out;
}

/** The first JSON path at which a and b differ (object key order ignored); undefined when equal. */
export function firstDifference(a: unknown, b: unknown, path = '$'): string | undefined {
  if (a === b) return undefined;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (isObj(a) && isObj(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference(a[k], b[k], `${path}.${k}`);
      if (d) return d;
    }
    return undefined;
  }
  return path;
}
