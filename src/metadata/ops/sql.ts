/**
 * run_sql: executes SQL on the request's connection; afterwards the database
 * is re-introspected and compared with what the metadata was built on
 * (metadata/diff.ts): renamed tables/columns are carried into the metadata,
 * dropped or retyped objects that metadata depends on fail with
 * dependency-error unless `cascade`, and SQL that leaves metadata objects
 * newly inconsistent is refused.
 */
import { introspect } from '../../catalog/introspect.js';
import { asPgError } from '../../db/db.js';
import { SvcError } from '../../errors.js';
import { newInconsistencies, newInconsistencyAfterSql } from '../../schema/dependencies.js';
import { applySchemaDiff } from '../diff.js';
import { defineOp } from '../registry.js';
import { reader } from '../../document/args.js';

export function pgExecError(e: unknown, statement: string, path: string): SvcError {
  const pe = asPgError(e);
  if (!pe) return e instanceof SvcError ? e : new SvcError(500, 'unexpected', (e as Error)?.message ?? 'unexpected error', path);
  return new SvcError(400, 'postgres-error', 'query execution failed', path, {
    statement,
    prepared: false,
    error: {
      exec_status: 'FatalError',
      hint: pe.hint ?? null,
      message: pe.message,
      status_code: pe.code,
      description: pe.detail ?? null,
      // beyond upstream: where in the statement the error is (the console points at it)
      ...(pe.position ? { position: Number(pe.position) } : {}),
    },
    arguments: [],
  });
}

/**
 * Can this SQL change what the metadata is built on (tables, columns, functions, types, …)? Only
 * SQL that plainly cannot — every statement a SELECT/WITH/VALUES/TABLE/EXPLAIN/SHOW with no
 * writing or schema-changing word outside literals and comments (writes may change an enum
 * table's values, which the schema is built on) — is run without the
 * metadata lock and without re-introspecting the database afterwards: `select pg_sleep(2)` then
 * no longer serialises every other metadata request. When in doubt: true. (A function called by
 * such a statement that itself runs DDL is not seen; run such SQL as `select` through `do`, or
 * follow it with reload_metadata.)
 */
export function sqlMayChangeSchema(sql: string): boolean {
  const bare = sql
    .replace(/\$([A-Za-z_][A-Za-z0-9_]*)?\$[\s\S]*?\$\1\$/g, ' ') // dollar-quoted bodies
    .replace(/'(?:[^']|'')*'/g, ' ') // string literals
    .replace(/"(?:[^"]|"")*"/g, ' x ') // quoted identifiers
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ');
  if (/['"$]|\/\*/.test(bare)) return true; // unbalanced quoting: do not guess
  const statements = bare
    .split(';')
    .map((x) => x.trim())
    .filter((x) => x !== '');
  if (statements.length === 0) return true;
  const DATA = /^(select|with|values|table|explain|show)\b/i;
  const SCHEMA =
    /\b(insert|update|delete|merge|into|create|alter|drop|comment|grant|revoke|truncate|rename|reindex|cluster|vacuum|analyze|refresh|import|do|call|execute|prepare|deallocate|set|reset|discard|load|security|owner|policy|rule|trigger|extension|schema|sequence|nextval|setval|lo_import|lo_export|pg_read_file|dblink)\b/i;
  return statements.some((st) => !DATA.test(st) || SCHEMA.test(st));
}

/** upstream v1.3's test for SQL whose effect on the metadata is checked (alter, drop, replace, create function, comment on) */
export function containsDdlKeyword(sql: string): boolean {
  return /\balter\b|\bdrop\b|\breplace\b|\bcreate\s+function\b|\bcomment\s+on\b/i.test(sql);
}

defineOp('run_sql', {
  kind: 'data',
  accessMode: (args) => ((args as { read_only?: boolean })?.read_only === true ? 'read-only-forced' : 'write'),
  locksMetadata: (args) => {
    const a = args as { sql?: unknown; read_only?: unknown } | null;
    if (a?.read_only === true) return false;
    return typeof a?.sql !== 'string' || sqlMayChangeSchema(a.sql);
  },
  async run(ctx, args) {
    const a = reader(args);
    const sql = a.string('sql');
    const cascade = a.bool('cascade', false);
    // upstream v1.3 (isSchemaCacheBuildRequiredRunSQL): without an explicit
    // check_metadata_consistency, the metadata is checked after SQL that contains a DDL keyword
    const check = a.has('check_metadata_consistency') ? a.bool('check_metadata_consistency', true) : containsDdlKeyword(sql);
    const readOnly = a.bool('read_only', false);
    a.done();

    const tracked = ctx.state.metadata.tables.length + ctx.state.metadata.functions.length > 0;
    const diff = check && !readOnly && tracked;
    const before = diff ? ctx.state.cache.db : undefined;
    let results;
    try {
      await ctx.conn.query('savepoint svc_run_sql');
      results = await ctx.conn.multi(sql);
      await ctx.conn.query('release savepoint svc_run_sql');
    } catch (e) {
      throw pgExecError(e, sql, ctx.path);
    }
    const schema = !readOnly && sqlMayChangeSchema(sql);
    if (schema) ctx.state.dbChanged = true;
    if (schema) {
      // later ops of a bulk see the database as this SQL left it
      const after = await introspect(ctx.conn);
      const known = ctx.state.cache.inconsistent;
      if (diff && applySchemaDiff(ctx.state.metadata, ctx.state.cache, before!, after, cascade, ctx.path)) ctx.state.metadataChanged = true;
      const cache = await ctx.rebuild({ db: after });
      if (check) {
        const fresh = newInconsistencies(known, cache.inconsistent);
        if (fresh.length) throw newInconsistencyAfterSql(fresh, ctx.path);
      }
    }
    const last = results[results.length - 1];
    if (!last || last.command !== 'SELECT' || (last.fields.length === 0 && last.rows.length === 0 && last.command !== 'SELECT')) {
      return { result_type: 'CommandOk', result: null };
    }
    return { result_type: 'TuplesOk', result: [last.fields, ...last.rows] };
  },
});
