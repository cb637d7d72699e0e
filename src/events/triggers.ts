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
  let condition = 'true';
  if (op === 'update' && spec.columns !== '*' && Array.isArray(spec.columns)) {
    condition = spec.columns.length ? spec.columns.map((c) => `(OLD.${quoteIdent(c)} IS DISTINCT FROM NEW.${quoteIdent(c)})`).join(' OR ') : 'false';
  }
  return [
    `CREATE OR REPLACE FUNCTION svc_catalog.${quoteIdent(fn)}() RETURNS trigger LANGUAGE plpgsql AS $svc$
DECLARE
  session_variables json;
BEGIN
  IF ${condition} THEN
    session_variables := nullif(current_setting('svc.user', true), '')::json;
    INSERT INTO svc_catalog.event_log (id, schema_name, table_name, trigger_name, payload)
    VALUES (gen_random_uuid(), TG_TABLE_SCHEMA, TG_TABLE_NAME, ${quoteLiteral(p.def.name)},
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
  for (const [name, p] of before) {
    const n = after.get(name);
    if (!n || !sameName(n.table, p.table) || JSON.stringify(n.def) !== JSON.stringify(p.def)) {
      for (const s of dropSql(name)) await conn.query(s);
    }
  }
  for (const [name, p] of after) {
    const b = before.get(name);
    if (b && sameName(b.table, p.table) && JSON.stringify(b.def) === JSON.stringify(p.def)) continue;
    if (!tableExists(p.table)) continue;
    for (const op of OPS) for (const s of createSql(p, op)) await conn.query(s);
  }
}
