/**
 * export_metadata's canonical shape: keys in Hasura's order, empty arrays
 * and unset optional members left out; and the inverse normalisation used by
 * replace_metadata and on load (every array present).
 */
import { SvcError } from '../errors.js';
import { typeMismatch } from './args.js';
import { apiLimitsEmpty, exportApiLimits } from './apiLimits.js';
import { type ApiLimits, emptyMetadata, emptyTable, type Metadata, type TableMetadata } from '../model/metadata.js';

const TABLE_ARRAYS = [
  'object_relationships',
  'array_relationships',
  'computed_fields',
  'remote_relationships',
  'insert_permissions',
  'select_permissions',
  'update_permissions',
  'delete_permissions',
  'event_triggers',
] as const;

const TOP_ARRAYS = ['functions', 'remote_schemas', 'query_collections', 'allowlist', 'actions', 'cron_triggers', 'rest_endpoints', 'inherited_roles'] as const;

function dropNullish<T extends Record<string, unknown>>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null) out[k] = v;
  return out as T;
}

const byName =
  <T>(key: (x: T) => string) =>
  (a: T, b: T) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
const qname = (q: { schema: string; name: string }) => `${q.schema}\u0000${q.name}`;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- sort keys read stored metadata JSON, validated when it was added
const SORT_KEY: Record<string, (x: any) => string> = {
  object_relationships: (x) => x.name,
  array_relationships: (x) => x.name,
  computed_fields: (x) => x.name,
  remote_relationships: (x) => x.name,
  insert_permissions: (x) => x.role,
  select_permissions: (x) => x.role,
  update_permissions: (x) => x.role,
  delete_permissions: (x) => x.role,
  event_triggers: (x) => x.name,
  tables: (x) => qname(x.table),
  functions: (x) => qname(x.function),
  remote_schemas: (x) => x.name,
  query_collections: (x) => x.name,
  allowlist: (x) => x.collection,
  actions: (x) => x.name,
  cron_triggers: (x) => x.name,
  rest_endpoints: (x) => x.name,
  inherited_roles: (x) => x.role_name,
};
const sorted = <T>(k: string, arr: T[]): T[] => [...arr].sort(byName(SORT_KEY[k]!));

/** export_metadata's top-level key order (Hasura's); the CLI's metadata directory keeps it too */
export const METADATA_KEY_ORDER: readonly string[] = [
  'version',
  'tables',
  'functions',
  'remote_schemas',
  'query_collections',
  'allowlist',
  'custom_types',
  'actions',
  'cron_triggers',
  'rest_endpoints',
  'api_limits',
  'inherited_roles',
];

/** The metadata as export_metadata returns it: deterministic order (by name), empties left out. */
export function exportMetadata(md: Metadata): Record<string, unknown> {
  const out: Record<string, unknown> = { version: 2 };
  out.tables = sorted<TableMetadata>('tables', md.tables).map((t) => {
    const o: Record<string, unknown> = { table: t.table };
    if (t.is_enum) o.is_enum = true;
    const cfg = t.configuration;
    if (cfg && (Object.keys(cfg.custom_root_fields ?? {}).length || Object.keys(cfg.custom_column_names ?? {}).length)) {
      o.configuration = { custom_root_fields: cfg.custom_root_fields ?? {}, custom_column_names: cfg.custom_column_names ?? {} };
    }
    for (const k of TABLE_ARRAYS) {
      const arr = t[k] as unknown[];
      if (arr.length) o[k] = sorted(k, arr).map((x) => dropNullish(x as Record<string, unknown>));
    }
    return o;
  });
  for (const k of TOP_ARRAYS) {
    // cron triggers with include_in_metadata: false live only in the catalog
    const arr = k === 'cron_triggers' ? md.cron_triggers.filter((c) => c.include_in_metadata) : (md[k] as unknown[]);
    if (arr.length) out[k] = sorted(k, arr).map((x) => dropNullish(x as Record<string, unknown>));
  }
  const ct = md.custom_types ?? {};
  const ctOut: Record<string, unknown> = {};
  for (const k of ['input_objects', 'objects', 'scalars', 'enums'] as const) {
    const v = ct[k];
    if (Array.isArray(v) && v.length) ctOut[k] = v;
  }
  if (Object.keys(ctOut).length) out.custom_types = ctOut;
  if (!apiLimitsEmpty(md.api_limits)) out.api_limits = exportApiLimits(md.api_limits!);
  // keep Hasura's top-level key order
  const ordered: Record<string, unknown> = {};
  for (const k of METADATA_KEY_ORDER) {
    if (out[k] !== undefined) ordered[k] = out[k];
  }
  return ordered;
}

/** A TableName/FunctionName as stored: a bare string means the public schema. */
function qualifyName(v: unknown): unknown {
  if (typeof v === 'string') return { schema: 'public', name: v };
  if (v && typeof v === 'object' && !Array.isArray(v) && typeof (v as { name?: unknown }).name === 'string') {
    const o = v as { schema?: unknown; name: string };
    return { schema: o.schema ?? 'public', name: o.name };
  }
  return v;
}

/** Fill in every array so internal code never checks for absence. */
export function normalizeMetadata(raw: unknown): Metadata {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw typeMismatch('Metadata', 'Object', raw, '$.args');
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw metadata JSON being normalised; shapes were validated on input
  const r = raw as Record<string, any>;
  const md = emptyMetadata();
  if (r.version !== undefined && r.version !== 1 && r.version !== 2) {
    throw new SvcError(400, 'parse-failed', `expected 1 or 2, encountered ${JSON.stringify(r.version)}`, '$.args.version');
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw metadata JSON being normalised
  md.tables = (r.tables ?? []).map((t: Record<string, any>): TableMetadata => {
    const table = typeof t.table === 'string' ? { schema: 'public', name: t.table } : { schema: t.table?.schema ?? 'public', name: t.table?.name };
    const out = emptyTable(table);
    if (t.is_enum) out.is_enum = true;
    if (t.configuration) out.configuration = t.configuration;
    for (const k of TABLE_ARRAYS) if (Array.isArray(t[k])) (out[k] as unknown[]) = t[k];
    // names inside the table's objects may be abbreviated too (`"remote_table": "author"`)
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw metadata JSON being normalised
    const rel = (x: any) => {
      const u = x?.using;
      if (!u || typeof u !== 'object') return x;
      const using = { ...u };
      if (using.manual_configuration && typeof using.manual_configuration === 'object') {
        using.manual_configuration = { ...using.manual_configuration, remote_table: qualifyName(using.manual_configuration.remote_table) };
      }
      const fk = using.foreign_key_constraint_on;
      if (fk && typeof fk === 'object' && !Array.isArray(fk) && 'table' in fk) using.foreign_key_constraint_on = { ...fk, table: qualifyName(fk.table) };
      return { ...x, using };
    };
    out.object_relationships = out.object_relationships.map(rel);
    out.array_relationships = out.array_relationships.map(rel);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw metadata JSON being normalised
    out.computed_fields = out.computed_fields.map((c: any) =>
      c?.definition && typeof c.definition === 'object' ? { ...c, definition: { ...c.definition, function: qualifyName(c.definition.function) } } : c,
    );
    return out;
  });
  for (const k of TOP_ARRAYS) if (Array.isArray(r[k])) (md[k] as unknown[]) = r[k];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw metadata JSON being normalised
  md.functions = md.functions.map((f: any) => (f && f.function ? { ...f, function: qualifyName(f.function) } : { function: qualifyName(f) }));
  if (r.custom_types && typeof r.custom_types === 'object') md.custom_types = r.custom_types;
  // validated by replace_metadata (metadata.ts) before it gets here
  if (r.api_limits && typeof r.api_limits === 'object' && !apiLimitsEmpty(r.api_limits as ApiLimits)) md.api_limits = r.api_limits as ApiLimits;
  return md;
}
