/**
 * Validation of `set_custom_types` (input objects, objects with relationships
 * to tables, scalars, enums) with Hasura's messages.
 */
import { displayName, type CustomTypes, type QualifiedTable } from '../model/metadata.js';
import type { TableModel } from '../model/tables.js';

const BUILTIN_SCALARS = new Set(['Int', 'Float', 'String', 'Boolean', 'ID']);
const q = (s: string) => JSON.stringify(s);

interface Field {
  name: string;
  type: string;
  description?: string | null;
  arguments?: unknown;
}
interface ObjectType {
  name: string;
  description?: string | null;
  fields: Field[];
  relationships?: Array<{ name: string; type: string; remote_table: QualifiedTable | string; field_mapping: Record<string, string> }> | null;
}

/** The definition as Hasura echoes it (nulls for absent members). */
export function normalizeCustomTypes(ct: CustomTypes): Record<string, unknown> {
  const objs = (ct.objects as ObjectType[] | null | undefined)?.map((o) => ({
    name: o.name,
    relationships: o.relationships
      ? o.relationships.map((r) => ({
          remote_table: typeof r.remote_table === 'string' ? { schema: 'public', name: r.remote_table } : r.remote_table,
          name: r.name,
          type: r.type,
          field_mapping: r.field_mapping,
        }))
      : null,
    description: o.description ?? null,
    fields: o.fields.map((f) => ({ arguments: f.arguments ?? null, name: f.name, type: f.type, description: f.description ?? null })),
  }));
  const inputs = (ct.input_objects as ObjectType[] | null | undefined)?.map((o) => ({
    name: o.name,
    description: o.description ?? null,
    fields: o.fields.map((f) => ({ name: f.name, type: f.type, description: f.description ?? null })),
  }));
  return { input_objects: inputs ?? null, objects: objs ?? null, scalars: ct.scalars ?? null, enums: ct.enums ?? null };
}

const baseType = (t: string) => t.replace(/[[\]!\s]/g, '');
const isList = (t: string) => t.trim().startsWith('[');

export function validateCustomTypes(ct: CustomTypes, pgScalars: Set<string>, lookup: (t: QualifiedTable) => TableModel | undefined): string[] {
  const problems: string[] = [];
  const scalars = (ct.scalars as Array<{ name: string }> | null | undefined) ?? [];
  const enums = (ct.enums as Array<{ name: string; values: Array<{ value: string }> }> | null | undefined) ?? [];
  const inputs = (ct.input_objects as ObjectType[] | null | undefined) ?? [];
  const objects = (ct.objects as ObjectType[] | null | undefined) ?? [];
  const all = [...scalars, ...enums, ...inputs, ...objects].map((x) => x.name);
  const dups = [...new Set(all.filter((n, i) => all.indexOf(n) !== i))];
  if (dups.length) problems.push(`the following types are defined more than once: ${dups.map(q).join(', ')}`);
  const scalarLike = new Set([...BUILTIN_SCALARS, ...scalars.map((s) => s.name), ...enums.map((e) => e.name)]);
  const known = (t: string) => scalarLike.has(t) || pgScalars.has(t);
  for (const e of enums) {
    const vals = e.values.map((v) => v.value);
    const d = [...new Set(vals.filter((n, i) => vals.indexOf(n) !== i))];
    if (d.length) problems.push(`the enum type ${q(e.name)} has the following values duplicated: ${d.map(q).join(', ')}`);
  }
  const inputNames = new Set(inputs.map((i) => i.name));
  for (const io of inputs) {
    const names = io.fields.map((f) => f.name);
    const d = [...new Set(names.filter((n, i) => names.indexOf(n) !== i))];
    if (d.length) problems.push(`the input object ${q(io.name)} has the following fields duplicated: ${d.map(q).join(', ')}`);
    for (const f of io.fields) {
      const b = baseType(f.type);
      if (!known(b) && !inputNames.has(b)) problems.push(`the type ${q(b)} for field ${q(f.name)} in input object type ${q(io.name)} does not exist`);
    }
  }
  const objectNames = new Set(objects.map((o) => o.name));
  for (const o of objects) {
    const names = o.fields.map((f) => f.name);
    const d = [...new Set(names.filter((n, i) => names.indexOf(n) !== i))];
    if (d.length) problems.push(`the object ${q(o.name)} has the following fields duplicated: ${d.map(q).join(', ')}`);
    for (const f of o.fields) {
      const b = baseType(f.type);
      if (objectNames.has(b)) problems.push(`the type ${q(b)} of the field ${q(f.name)} in the object type ${q(o.name)} is object type which isn't allowed`);
      else if (!known(b)) problems.push(`the type ${q(b)} for field ${q(f.name)} in  object type ${q(o.name)} does not exist`);
    }
    for (const r of o.relationships ?? []) {
      if (o.fields.some((f) => f.name === r.name)) problems.push(`the relationship ${q(r.name)} of object type ${q(o.name)} has the name of one of its fields`);
      const table = typeof r.remote_table === 'string' ? { schema: 'public', name: r.remote_table } : r.remote_table;
      const tm = lookup(table);
      for (const [field, col] of Object.entries(r.field_mapping ?? {})) {
        const f = o.fields.find((x) => x.name === field);
        if (!f) problems.push(`the field ${q(field)} for relationship ${q(r.name)} in object type ${q(o.name)} does not exist`);
        else if (isList(f.type)) problems.push(`the type of the field ${q(field)} for relationship ${q(r.name)} in object type ${q(o.name)} is a list type`);
        if (tm && !tm.columnsByName.has(col)) {
          problems.push(
            `the column ${q(col)} of remote table ${q(displayName(table))} for relationship ${q(r.name)} of object type ${q(o.name)} does not exist`,
          );
        }
      }
      if (!tm) problems.push(`the remote table ${q(displayName(table))} for relationship ${q(r.name)} of object type ${q(o.name)} does not exist`);
    }
  }
  return problems;
}

export function customTypesReason(problems: string[]): string {
  if (problems.length === 1) return `validation for the given custom types failed because ${problems[0]}`;
  return `validation for the given custom types failed for the following reasons:\n${problems.map((p) => `  • ${p}\n`).join('')}`;
}
