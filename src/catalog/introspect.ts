/**
 * Database introspection: one SQL statement returning JSON that describes the
 * user schemas' tables, views, columns, keys, foreign keys and functions.
 * The result is plain data; `schema/build` combines it with the metadata.
 */
import type { Queryable } from '../db/db.js';
import type { DbIntrospection, FunctionIntrospection, TableIntrospection } from '../model/introspection.js';

const EXCLUDED = `('pg_catalog','information_schema','svc_catalog','hdb_catalog','hdb_views')`;

const INTROSPECTION_SQL = `
select json_build_object(
 'tables', coalesce((
  select json_agg(json_build_object(
    'oid', c.oid::int8, 'schema', n.nspname, 'name', c.relname, 'kind', c.relkind,
    'description', obj_description(c.oid, 'pg_class'),
    'columns', coalesce((
      select json_agg(json_build_object(
        'name', a.attname, 'attnum', a.attnum, 'type', t.typname, 'typeSchema', tn.nspname,
        'typeOid', t.oid::int8, 'category', t.typcategory,
        'elemType', et.typname,
        'formatted', format_type(a.atttypid, a.atttypmod),
        'nullable', not a.attnotnull, 'hasDefault', a.atthasdef,
        'isIdentity', a.attidentity <> '', 'isGenerated', a.attgenerated <> '',
        'description', col_description(c.oid, a.attnum),
        'enumValues', case when t.typtype = 'e' then (select json_agg(e.enumlabel order by e.enumsortorder) from pg_enum e where e.enumtypid = t.oid) end
      ) order by a.attnum)
      from pg_attribute a
      join pg_type t on t.oid = a.atttypid
      join pg_namespace tn on tn.oid = t.typnamespace
      left join pg_type et on et.oid = t.typelem and t.typcategory = 'A'
      where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped), '[]'::json),
    'primaryKey', (
      select json_build_object('name', con.conname, 'columns',
        (select json_agg(a.attname order by k.ord) from unnest(con.conkey) with ordinality k(attnum, ord)
           join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum))
      from pg_constraint con where con.conrelid = c.oid and con.contype = 'p'),
    'uniqueConstraints', coalesce((
      select json_agg(json_build_object('name', con.conname, 'columns',
        (select json_agg(a.attname order by k.ord) from unnest(con.conkey) with ordinality k(attnum, ord)
           join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum)) order by con.conname)
      from pg_constraint con where con.conrelid = c.oid and con.contype = 'u'), '[]'::json),
    'foreignKeys', coalesce((
      select json_agg(json_build_object('oid', con.oid::int8, 'name', con.conname,
        'columns', (select json_agg(a.attname order by k.ord) from unnest(con.conkey) with ordinality k(attnum, ord)
           join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum),
        'refTable', json_build_object('schema', rn.nspname, 'name', rc.relname),
        'refColumns', (select json_agg(a.attname order by k.ord) from unnest(con.confkey) with ordinality k(attnum, ord)
           join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.attnum)) order by con.conname)
      from pg_constraint con join pg_class rc on rc.oid = con.confrelid join pg_namespace rn on rn.oid = rc.relnamespace
      where con.conrelid = c.oid and con.contype = 'f'), '[]'::json),
    'insertable', c.relkind in ('r','p','f') or (pg_relation_is_updatable(c.oid, true) & 8) = 8,
    'updatable', c.relkind in ('r','p','f') or (pg_relation_is_updatable(c.oid, true) & 4) = 4,
    'deletable', c.relkind in ('r','p','f') or (pg_relation_is_updatable(c.oid, true) & 16) = 16
  ))
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where c.relkind in ('r','v','m','f','p') and n.nspname not in ${EXCLUDED} and n.nspname not like 'pg\\_%'
 ), '[]'::json),
 'functions', coalesce((
  select json_agg(json_build_object(
    'oid', p.oid::int8, 'schema', n.nspname, 'name', p.proname, 'volatility', p.provolatile,
    'returnsSet', p.proretset,
    'returnType', json_build_object('schema', rtn.nspname, 'name', rt.typname, 'isTable', rt.typrelid <> 0 and rt.typtype = 'c', 'category', rt.typcategory),
    'args', coalesce((
      select json_agg(json_build_object(
        'name', nullif(coalesce(p.proargnames[i.ord], ''), ''),
        'type', at.typname, 'typeSchema', atn.nspname,
        'mode', coalesce(p.proargmodes[i.ord]::text, 'i')) order by i.ord)
      from unnest(coalesce(p.proallargtypes, p.proargtypes::oid[])) with ordinality i(typ, ord)
      join pg_type at on at.oid = i.typ join pg_namespace atn on atn.oid = at.typnamespace), '[]'::json),
    'defaultArgs', p.pronargdefaults,
    'description', obj_description(p.oid, 'pg_proc'),
    'overloaded', (select count(*) > 1 from pg_proc p2 where p2.pronamespace = p.pronamespace and p2.proname = p.proname)
  ) order by p.oid)
  from pg_proc p join pg_namespace n on n.oid = p.pronamespace
  join pg_type rt on rt.oid = p.prorettype join pg_namespace rtn on rtn.oid = rt.typnamespace
  where n.nspname not in ${EXCLUDED} and n.nspname not like 'pg\\_%' and p.prokind = 'f'
 ), '[]'::json),
 'scalarTypes', (select json_agg(distinct t.typname) from pg_type t join pg_namespace n on n.oid = t.typnamespace
   where t.typtype in ('b','e','d') and t.typname not like '\\_%' and n.nspname not in ('information_schema'))
)::text as doc`;

export async function introspect(db: Queryable): Promise<DbIntrospection> {
  const r = await db.query(INTROSPECTION_SQL);
  const doc = JSON.parse(r.rows[0].doc) as { tables: TableIntrospection[]; functions: FunctionIntrospection[]; scalarTypes: string[] | null };
  const tables = new Map<string, TableIntrospection>();
  for (const t of doc.tables) {
    for (const c of t.columns) {
      if (c.elemType === null) delete c.elemType;
      if (c.enumValues === null) delete c.enumValues;
    }
    tables.set(`${t.schema}.${t.name}`, t);
  }
  const functions = new Map<string, FunctionIntrospection>();
  const functionsByOid = new Map<number, FunctionIntrospection>();
  for (const f of doc.functions) {
    const key = `${f.schema}.${f.name}`;
    if (!functions.has(key)) functions.set(key, f);
    functionsByOid.set(f.oid, f);
  }
  return { tables, functions, functionsByOid, scalarTypes: new Set(doc.scalarTypes ?? []) };
}
