/**
 * The /v1/query operation that drops one inconsistent object, by its `type` in
 * get_inconsistent_metadata. EXTENSION POINT: object types of features added later (event
 * triggers, cron triggers, actions, remote schemas, …) get a line here; anything without one can
 * still be dropped with "Drop all inconsistent objects" (drop_inconsistent_metadata).
 */
export interface InconsistentObject {
  type: string;
  reason: string;
  definition: unknown;
  name?: string;
}

type Def = Record<string, any>;

const DROPPERS: Record<string, (d: Def) => { type: string; args: unknown }> = {
  table: (d) => ({ type: 'untrack_table', args: { table: d.table ?? d, cascade: true } }),
  function: (d) => ({ type: 'untrack_function', args: d.function ?? d }),
  object_relation: (d) => ({ type: 'drop_relationship', args: { table: d.table, relationship: d.name } }),
  array_relation: (d) => ({ type: 'drop_relationship', args: { table: d.table, relationship: d.name } }),
  computed_field: (d) => ({ type: 'drop_computed_field', args: { table: d.table, name: d.name, cascade: true } }),
  insert_permission: (d) => ({ type: 'drop_insert_permission', args: { table: d.table, role: d.role } }),
  select_permission: (d) => ({ type: 'drop_select_permission', args: { table: d.table, role: d.role } }),
  update_permission: (d) => ({ type: 'drop_update_permission', args: { table: d.table, role: d.role } }),
  delete_permission: (d) => ({ type: 'drop_delete_permission', args: { table: d.table, role: d.role } }),
  event_trigger: (d) => ({ type: 'delete_event_trigger', args: { name: d.name ?? d.configuration?.name } }),
  remote_relationship: (d) => ({ type: 'delete_remote_relationship', args: { table: d.table, name: d.name } }),
  remote_schema: (d) => ({ type: 'remove_remote_schema', args: { name: d.name } }),
  action: (d) => ({ type: 'drop_action', args: { name: d.name, clear_data: true } }),
  cron_trigger: (d) => ({ type: 'delete_cron_trigger', args: { name: d.name } }),
};

/** The operation dropping `o` on its own, or undefined when only "drop all" can remove it. */
export function dropOperation(o: InconsistentObject): { type: string; args: unknown } | undefined {
  const d = o.definition;
  if (!d || typeof d !== 'object') return undefined;
  return DROPPERS[o.type]?.(d as Def);
}

/** A short name of an inconsistent object for the list. */
export function describeObject(o: InconsistentObject): string {
  const d = (o.definition ?? {}) as Def;
  const table = (t: unknown) => (typeof t === 'string' ? t : t && typeof t === 'object' ? `${(t as Def).schema ?? 'public'}.${(t as Def).name}` : '');
  if (o.type === 'table') return table(d.table ?? d);
  if (o.type === 'function') return table(d.function ?? d);
  if (o.type.endsWith('_permission')) return `${table(d.table)} · ${d.role}`;
  // an event trigger's definition is {table, configuration} (the trigger as stored)
  if (d.table) return `${table(d.table)} · ${d.name ?? d.configuration?.name ?? ''}`;
  return String(d.name ?? o.name ?? JSON.stringify(d));
}
