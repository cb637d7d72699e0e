/**
 * Event triggers in the database: one plpgsql function + trigger per
 * (trigger, operation) that appends the change to svc_catalog.event_log.
 * Kept in step with the metadata at commit time of every metadata change.
 */
import type { Conn } from '../db/db.js';
import { sameName, type EventTriggerDef, type Metadata, type QualifiedTable } from '../metadata/types.js';
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

export const triggerFunctionName = (name: string, op: Op) => `notify_svc_${name}_${op.toUpperCase()}`;

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
  ];
}

function dropSql(name: string): string[] {
  return OPS.map((op) => `DROP FUNCTION IF EXISTS svc_catalog.${quoteIdent(triggerFunctionName(name, op))}() CASCADE`);
}

/** Make the database's triggers match `next` (given what `prev` had installed). */
export async function syncEventTriggers(conn: Conn, prev: Metadata, next: Metadata, tableExists: (t: QualifiedTable) => boolean): Promise<void> {
  const before = collect(prev);
  const after = collect(next);
  const gone: string[] = [];
  for (const [name, p] of before) {
    const n = after.get(name);
    if (!n) gone.push(name);
    if (!n || !sameName(n.table, p.table) || JSON.stringify(n.def) !== JSON.stringify(p.def)) {
      for (const s of dropSql(name)) await conn.query(s);
    }
  }
  // a trigger that is gone (deleted, its table untracked, metadata replaced or cleared): its events
  // are archived, as upstream's delete_event_trigger does; they stay in the log, never delivered
  if (gone.length) await conn.query('update svc_catalog.event_log set archived = true where trigger_name = any($1::text[]) and not archived', [gone]);
  for (const [name, p] of after) {
    const b = before.get(name);
    if (b && sameName(b.table, p.table) && JSON.stringify(b.def) === JSON.stringify(p.def)) continue;
    if (!tableExists(p.table)) continue;
    for (const op of OPS) for (const s of createSql(p, op)) await conn.query(s);
  }
}
