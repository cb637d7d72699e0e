/**
 * Event triggers in the database: one plpgsql function + trigger per
 * (trigger, operation) that appends the change to svc_catalog.event_log.
 * Kept in step with the metadata at commit time of every metadata change, and at start-up.
 *
 * Guarantees:
 * - the database objects of two (trigger, operation) pairs never share a name: the name is
 *   upstream's `notify_svc_<name>_<OP>` when that is a valid trigger name that fits PostgreSQL's 63
 *   bytes, else `notify_svc_<prefix>~<hash of the full name>_<OP>` (`~` is never in a valid name),
 *   at most 63 bytes — PostgreSQL never truncates (and so never merges) them;
 * - each function carries its owner in its comment (`svc event trigger <name>`); the sync compares
 *   what is installed (functions, their triggers, tables, owners) with what the metadata wants, drops
 *   what belongs to nobody (e.g. objects of an older naming), re-installs what is missing, changed
 *   or not its owner's, and then verifies the result: a trigger whose objects are not in place fails
 *   the metadata change instead of silently capturing nothing.
 */
import { sha256Hex } from '../core/hash.js';
import type { Conn } from '../db/db.js';
import { SvcError } from '../errors.js';
import { sameName, type EventTriggerDef, type Metadata, type QualifiedTable } from '../model/metadata.js';
import { qualified, quoteIdent, quoteLiteral } from '../sql/ident.js';

type Op = 'insert' | 'update' | 'delete';
const OPS: Op[] = ['insert', 'update', 'delete'];

interface Placed {
  table: QualifiedTable;
  def: EventTriggerDef;
}

function collect(md: Metadata): Map<string, Placed> {
  const m = new Map<string, Placed>();
  for (const t of md.tables) for (const def of t.event_triggers) m.set(def.name, { table: t.table, def });
  return m;
}

/** PostgreSQL's identifier limit (NAMEDATALEN - 1), in bytes. */
const MAX_IDENT_BYTES = 63;
/** upstream's rule for event trigger names (create_event_trigger) */
export const TRIGGER_NAME_RE = /^[A-Za-z]+[A-Za-z0-9_-]*$/;
export const MAX_TRIGGER_NAME_LENGTH = 42;

/** The name of the function and trigger of (trigger `name`, `op`); unique per pair, at most 63 bytes. */
export function triggerFunctionName(name: string, op: Op): string {
  const suffix = `_${op.toUpperCase()}`;
  const plain = `notify_svc_${name}${suffix}`;
  if (TRIGGER_NAME_RE.test(name) && Buffer.byteLength(plain) <= MAX_IDENT_BYTES) return plain;
  const hash = sha256Hex(name).slice(0, 16);
  // a readable prefix of the name (ASCII letters, digits, _ and - only), then the hash
  const room = MAX_IDENT_BYTES - 'notify_svc_'.length - 1 - hash.length - suffix.length;
  const prefix = name.replace(/[^A-Za-z0-9_-]/g, '').slice(0, room);
  return `notify_svc_${prefix}~${hash}${suffix}`;
}

/** The comment that names a function's owner. */
const ownerComment = (name: string) => `svc event trigger ${name}`;

function rowJson(ref: 'NEW' | 'OLD', cols: string[] | '*' | undefined): string {
  if (!cols || cols === '*') return `row_to_json(${ref})`;
  return `json_build_object(${cols.map((c) => `${quoteLiteral(c)}, ${ref}.${quoteIdent(c)}`).join(', ')})`;
}

function createSql(p: Placed, op: Op): string[] {
  const spec = p.def.definition[op];
  if (!spec) return [];
  const fn = triggerFunctionName(p.def.name, op);
  const payload = spec.payload ?? '*';
  const oldJson = op === 'insert' ? 'NULL' : rowJson('OLD', payload);
  const newJson = op === 'delete' ? 'NULL' : rowJson('NEW', payload);
  // an update fires only when a listened column changed (all columns for "*"), compared as
  // upstream does: the row of those columns with `<>`, or byte-wise (`*<>`) when a column's type
  // has no equality operator (json)
  let changed = 'true';
  let rows = '';
  if (op === 'update') {
    const cols = spec.columns;
    if (Array.isArray(cols) && cols.length === 0) changed = 'false';
    else {
      const listed = (ref: 'OLD' | 'NEW') => (Array.isArray(cols) ? `row(${cols.map((c) => `${ref}.${quoteIdent(c)}`).join(', ')})` : `row(${ref}.*)`);
      rows = `
  _old := ${listed('OLD')};
  _new := ${listed('NEW')};
  BEGIN
    _changed := _old <> _new;
  EXCEPTION WHEN undefined_function THEN
    _changed := _old *<> _new;
  END;`;
      changed = '_changed';
    }
  }
  return [
    `CREATE OR REPLACE FUNCTION svc_catalog.${quoteIdent(fn)}() RETURNS trigger LANGUAGE plpgsql AS $svc$
DECLARE
  session_variables json;
  _old record;
  _new record;
  _changed boolean;
BEGIN${rows}
  IF ${changed} THEN
    session_variables := nullif(current_setting('svc.user', true), '')::json;
    INSERT INTO svc_catalog.event_log (schema_name, table_name, trigger_name, payload)
    VALUES (TG_TABLE_SCHEMA, TG_TABLE_NAME, ${quoteLiteral(p.def.name)},
      json_build_object('op', TG_OP, 'data', json_build_object('old', ${oldJson}, 'new', ${newJson}), 'session_variables', session_variables)::jsonb);
  END IF;
  RETURN NULL;
END $svc$`,
    `DROP TRIGGER IF EXISTS ${quoteIdent(fn)} ON ${qualified(p.table)}`,
    `CREATE TRIGGER ${quoteIdent(fn)} AFTER ${op.toUpperCase()} ON ${qualified(p.table)} FOR EACH ROW EXECUTE PROCEDURE svc_catalog.${quoteIdent(fn)}()`,
    `COMMENT ON FUNCTION svc_catalog.${quoteIdent(fn)}() IS ${quoteLiteral(ownerComment(p.def.name))}`,
  ];
}

const dropFunction = (fn: string) => `DROP FUNCTION IF EXISTS svc_catalog.${quoteIdent(fn)}() CASCADE`;

/** An installed notify function: its owner (comment) and the tables of the triggers calling it. */
interface Installed {
  owner: string | null;
  /** `schema.table` of each trigger named like the function that calls it */
  triggers: Array<{ schema: string; table: string; tgname: string }>;
}

const INSTALLED = `
select p.proname, obj_description(p.oid, 'pg_proc') as owner,
  coalesce(json_agg(json_build_object('schema', tn.nspname, 'table', tc.relname, 'tgname', t.tgname)) filter (where t.oid is not null), '[]') as triggers
from pg_proc p
join pg_namespace pn on pn.oid = p.pronamespace and pn.nspname = 'svc_catalog'
left join pg_trigger t on t.tgfoid = p.oid
left join pg_class tc on tc.oid = t.tgrelid
left join pg_namespace tn on tn.oid = tc.relnamespace
where p.proname like 'notify\\_svc\\_%'
group by p.oid, p.proname`;

async function installed(conn: Conn): Promise<Map<string, Installed>> {
  const r = await conn.query(INSTALLED);
  const m = new Map<string, Installed>();
  for (const row of r.rows as Array<{ proname: string; owner: string | null; triggers: unknown }>) {
    const triggers = (typeof row.triggers === 'string' ? JSON.parse(row.triggers) : row.triggers) as Installed['triggers'];
    m.set(row.proname, { owner: row.owner, triggers });
  }
  return m;
}

/** The function `fn` is in place for (trigger, table): its owner, one trigger of its name, on that table. */
function inPlace(i: Installed | undefined, fn: string, p: Placed): boolean {
  return (
    !!i &&
    i.owner === ownerComment(p.def.name) &&
    i.triggers.length === 1 &&
    i.triggers[0]!.tgname === fn &&
    i.triggers[0]!.schema === p.table.schema &&
    i.triggers[0]!.table === p.table.name
  );
}

/**
 * Make the database's triggers match `next` (given what `prev` had installed, and what is really
 * installed); throws when a trigger's objects are still not in place afterwards.
 */
export async function syncEventTriggers(conn: Conn, prev: Metadata, next: Metadata, tableExists: (t: QualifiedTable) => boolean): Promise<void> {
  const before = collect(prev);
  const after = collect(next);
  const gone = [...before.keys()].filter((name) => !after.has(name));
  // what the metadata wants: function name → (trigger, op)
  const wanted = new Map<string, { p: Placed; op: Op }>();
  for (const p of after.values()) {
    if (!tableExists(p.table)) continue;
    for (const op of OPS) if (p.def.definition[op]) wanted.set(triggerFunctionName(p.def.name, op), { p, op });
  }
  const have = await installed(conn);
  // objects nobody wants (deleted triggers or operations, an older naming): dropped with their triggers
  for (const fn of have.keys()) if (!wanted.has(fn)) await conn.query(dropFunction(fn));
  for (const [fn, { p, op }] of wanted) {
    const b = before.get(p.def.name);
    const unchanged = b && sameName(b.table, p.table) && JSON.stringify(b.def) === JSON.stringify(p.def);
    const i = have.get(fn);
    if (unchanged && inPlace(i, fn, p)) continue;
    if (i) await conn.query(dropFunction(fn));
    for (const s of createSql(p, op)) await conn.query(s);
  }
  // a trigger that is gone (deleted, its table untracked, metadata replaced or cleared): its events
  // are archived, as upstream's delete_event_trigger does; they stay in the log, never delivered
  if (gone.length) await conn.query('update svc_catalog.event_log set archived = true where trigger_name = any($1::text[]) and not archived', [gone]);
  const now = await installed(conn);
  for (const [fn, { p }] of wanted) {
    if (!inPlace(now.get(fn), fn, p)) {
      throw new SvcError(500, 'unexpected', `the database objects of event trigger ${JSON.stringify(p.def.name)} could not be installed (${fn})`);
    }
  }
}
