/**
 * The tables a compiled statement reads, for change-driven refetches (subscriptions/liveQueryManager.ts)
 * and anything else keyed on table changes (tracker.ts).
 *
 * Every table, view and function the SQL compiler emits is schema-qualified and quoted
 * (`"schema"."name"`, sql/ident.ts): the root table, relationship targets, tables of permission
 * filters' `_exists` and relationships, functions of root fields and computed fields. The
 * statement's text is scanned for such pairs and each is resolved against the database:
 * - an ordinary or partitioned table: itself;
 * - a view: the relations and functions its rewrite rule depends on (pg_depend), recursively;
 * - a function in a user schema: its body is scanned (LANGUAGE sql and plpgsql only) for
 *   identifiers naming user tables, views or functions (by name, in any schema — a superset),
 *   recursively; a plpgsql body with EXECUTE (dynamic SQL) or another language is unknown;
 * - a materialized view or a foreign table: unknown (no trigger can tell when it changes);
 * - Svc's own tables (svc_catalog: async actions' log) are relations like any other: no change
 *   trigger, so their readers poll; a statement that names no table at all is unknown too.
 * Unknown makes the whole set unknown (`null`): its readers poll. Over-approximation (a table named
 * in a comment of a function body, a column alias that looks like a table) costs extra refetches
 * only. Functions of system schemas (pg_catalog: now(), lower(), …) are taken to read no user table.
 */
import type { Queryable } from '../db/db.js';

export interface ReadCatalog {
  /** `schema.name` → relkind ('r','p','v','m','f') and name of every user relation */
  relations: Map<string, { kind: string; name: string }>;
  /** `schema.name` of a view → `schema.name` of the relations its rule reads, and function oids */
  views: Map<string, { rels: string[]; funcs: number[] }>;
  /** every user function, overloads included */
  functions: Array<{ oid: number; schema: string; name: string; lang: string; src: string }>;
}

const EXCLUDED = `('pg_catalog','information_schema','svc_catalog','hdb_catalog','hdb_views')`;

const CATALOG_SQL = `
select json_build_object(
 'relations', coalesce((select json_agg(json_build_array(n.nspname, c.relname, c.relkind))
   from pg_class c join pg_namespace n on n.oid = c.relnamespace
   where c.relkind in ('r','p','v','m','f') and n.nspname not in ('pg_catalog','information_schema') and n.nspname not like 'pg\\_%'), '[]'),
 'views', coalesce((select json_agg(json_build_object('schema', vn.nspname, 'name', v.relname,
     'rels', coalesce((select json_agg(distinct rn.nspname || '.' || r.relname)
        from pg_rewrite rw join pg_depend d on d.classid = 'pg_rewrite'::regclass and d.objid = rw.oid and d.refclassid = 'pg_class'::regclass
        join pg_class r on r.oid = d.refobjid join pg_namespace rn on rn.oid = r.relnamespace
        where rw.ev_class = v.oid and r.oid <> v.oid), '[]'),
     'funcs', coalesce((select json_agg(distinct d.refobjid::int8)
        from pg_rewrite rw join pg_depend d on d.classid = 'pg_rewrite'::regclass and d.objid = rw.oid and d.refclassid = 'pg_proc'::regclass
        where rw.ev_class = v.oid), '[]')))
   from pg_class v join pg_namespace vn on vn.oid = v.relnamespace
   where v.relkind in ('v','m') and vn.nspname not in ${EXCLUDED} and vn.nspname not like 'pg\\_%'), '[]'),
 'functions', coalesce((select json_agg(json_build_object('oid', p.oid::int8, 'schema', n.nspname, 'name', p.proname, 'lang', l.lanname, 'src', p.prosrc))
   from pg_proc p join pg_namespace n on n.oid = p.pronamespace join pg_language l on l.oid = p.prolang
   where n.nspname not in ${EXCLUDED} and n.nspname not like 'pg\\_%'), '[]')
)::text as doc`;

export async function loadReadCatalog(db: Queryable): Promise<ReadCatalog> {
  const r = await db.query(CATALOG_SQL);
  const doc = JSON.parse(r.rows[0].doc) as {
    relations: Array<[string, string, string]>;
    views: Array<{ schema: string; name: string; rels: string[]; funcs: Array<number | string> }>;
    functions: Array<{ oid: number | string; schema: string; name: string; lang: string; src: string }>;
  };
  return {
    relations: new Map(doc.relations.map(([s, n, k]) => [`${s}.${n}`, { kind: k, name: n }])),
    views: new Map(doc.views.map((v) => [`${v.schema}.${v.name}`, { rels: v.rels, funcs: v.funcs.map(Number) }])),
    functions: doc.functions.map((f) => ({ ...f, oid: Number(f.oid) })),
  };
}

const PAIR = /"((?:[^"]|"")+)"\."((?:[^"]|"")+)"/g;
const unq = (s: string) => s.replace(/""/g, '"');

/** Identifiers of a function body: quoted ones as written, bare ones lower-cased. */
function bodyIdents(src: string): Set<string> {
  const out = new Set<string>();
  const re = /"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_$]*)/g;
  for (let m = re.exec(src); m; m = re.exec(src)) out.add(m[1] !== undefined ? unq(m[1]) : m[2]!.toLowerCase());
  return out;
}

/** Resolves statements' read sets against one catalog (memoized per object). */
export class ReadResolver {
  private readonly byName = new Map<string, string[]>();
  private readonly fnByName = new Map<string, Array<ReadCatalog['functions'][number]>>();
  private readonly fnByKey = new Map<string, Array<ReadCatalog['functions'][number]>>();
  private readonly fnByOid = new Map<number, ReadCatalog['functions'][number]>();
  private readonly memo = new Map<string, Set<string> | null>();
  private readonly inProgress = new Set<string>();

  constructor(readonly catalog: ReadCatalog) {
    for (const [key, { name }] of catalog.relations) {
      const list = this.byName.get(name) ?? [];
      list.push(key);
      this.byName.set(name, list);
    }
    for (const f of catalog.functions) {
      this.fnByOid.set(f.oid, f);
      const l = this.fnByName.get(f.name) ?? [];
      l.push(f);
      this.fnByName.set(f.name, l);
      const k = `${f.schema}.${f.name}`;
      const lk = this.fnByKey.get(k) ?? [];
      lk.push(f);
      this.fnByKey.set(k, lk);
    }
  }

  /** The base tables (`schema.name`) `sql` reads, or null when that cannot be known. */
  tablesOf(sql: string): string[] | null {
    const out = new Set<string>();
    PAIR.lastIndex = 0;
    for (let m = PAIR.exec(sql); m; m = PAIR.exec(sql)) {
      const key = `${unq(m[1]!)}.${unq(m[2]!)}`;
      if (this.catalog.relations.has(key)) {
        if (!this.addRelation(key, out, 0)) return null;
      } else {
        const fns = this.fnByKey.get(key);
        if (fns) for (const f of fns) if (!this.addFunction(f, out, 0)) return null;
      }
    }
    // nothing read (a function of pg_catalog alone, now()): no change would ever tell: unknown
    return out.size ? [...out].sort() : null;
  }

  private addRelation(key: string, out: Set<string>, depth: number): boolean {
    const kind = this.catalog.relations.get(key)?.kind;
    if (kind === 'r' || kind === 'p') {
      out.add(key);
      return true;
    }
    if (kind !== 'v' || depth > 16) return false;
    return this.merge(`rel:${key}`, out, () => {
      const v = this.catalog.views.get(key);
      if (!v) return null;
      const mine = new Set<string>();
      // a system catalog (pg_stat_activity, …) gives no change signal: unknown
      for (const r of v.rels) if (!this.catalog.relations.has(r) || !this.addRelation(r, mine, depth + 1)) return null;
      for (const oid of v.funcs) {
        const f = this.fnByOid.get(oid);
        if (f && !this.addFunction(f, mine, depth + 1)) return null;
      }
      return mine;
    });
  }

  private addFunction(f: ReadCatalog['functions'][number], out: Set<string>, depth: number): boolean {
    if (depth > 16) return false;
    return this.merge(`fn:${f.oid}`, out, () => {
      if (f.lang !== 'sql' && f.lang !== 'plpgsql') return null;
      const idents = bodyIdents(f.src);
      if (f.lang === 'plpgsql' && idents.has('execute')) return null;
      const mine = new Set<string>();
      for (const id of idents) {
        for (const key of this.byName.get(id) ?? []) if (!this.addRelation(key, mine, depth + 1)) return null;
        for (const g of this.fnByName.get(id) ?? []) if (g.oid !== f.oid && !this.addFunction(g, mine, depth + 1)) return null;
      }
      return mine;
    });
  }

  private merge(memoKey: string, out: Set<string>, compute: () => Set<string> | null): boolean {
    let r = this.memo.get(memoKey);
    if (r === undefined) {
      // mutual recursion (f calls g calls f): unknown, rather than a set missing what the cycle reads
      if (this.inProgress.has(memoKey)) return false;
      this.inProgress.add(memoKey);
      try {
        r = compute();
      } finally {
        this.inProgress.delete(memoKey);
      }
      this.memo.set(memoKey, r);
    }
    if (r === null) return false;
    for (const t of r) out.add(t);
    return true;
  }
}
