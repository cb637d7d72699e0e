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
import { sqlStatements, type SqlStatement } from '../../sql/statements.js';

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

/**
 * run_sql's SQL runs in the request's transaction (with `bulk`'s other ops and the metadata it
 * changes: all or nothing; `read_only` is that transaction's mode). A statement that ends that
 * transaction (COMMIT, END, ROLLBACK, ABORT, PREPARE TRANSACTION, … AND CHAIN) would commit or
 * drop part of it behind the request's back — the change kept though the request fails, read_only
 * and bulk's atomicity bypassed, the schema cache left stale — so it is refused before anything
 * runs (`not-supported`). BEGIN and START TRANSACTION are harmless inside (PostgreSQL warns and
 * goes on); a BEGIN … COMMIT around the whole SQL, as migration files often have, is accepted: its
 * COMMIT is the request's own. Savepoints (SAVEPOINT, RELEASE, ROLLBACK TO) stay inside it.
 * Returns the SQL to run and whether it was such a wrapped block.
 */
export function withoutTransactionControl(sql: string, path: string): { sql: string; wrapped: boolean } {
  const statements = sqlStatements(sql);
  const begins = (w: string[]) => w[0] === 'begin' || (w[0] === 'start' && w[1] === 'transaction');
  /** COMMIT or END (a transaction's normal end, not COMMIT PREPARED) */
  const commits = (w: string[]) => (w[0] === 'commit' || w[0] === 'end') && w[1] !== 'prepared';
  /** a statement that ends the transaction: COMMIT, END, ABORT, ROLLBACK (not ROLLBACK TO a savepoint, nor ROLLBACK PREPARED) */
  const ends = (w: string[]): boolean => commits(w) || w[0] === 'abort' || (w[0] === 'rollback' && w[1] !== 'to' && w[2] !== 'to' && w[1] !== 'prepared');
  const chains = (st: SqlStatement) => ends(st.words) && /\band\s+chain\b/i.test(sql.slice(st.start, st.end));
  const first = statements[0];
  const last = statements[statements.length - 1];
  const wrapped = !!first && !!last && first !== last && begins(first.words) && commits(last.words) && !chains(last);
  for (const st of wrapped ? statements.slice(1, -1) : statements) {
    const w = st.words;
    if (ends(w) || (w[0] === 'prepare' && w[1] === 'transaction') || w[1] === 'prepared') {
      const word = w
        .slice(0, w[0] === 'prepare' || w[1] === 'prepared' ? 2 : 1)
        .join(' ')
        .toUpperCase();
      throw new SvcError(
        400,
        'not-supported',
        `run_sql runs its SQL in a transaction of its own, committed with the metadata: ${word} is not supported in it (a BEGIN … COMMIT around the whole SQL is accepted)`,
        path,
      );
    }
  }
  if (!wrapped) return { sql, wrapped };
  // the BEGIN and COMMIT blanked out, not cut: PostgreSQL's error positions stay those of the text sent
  const blank = (from: number, to: number) => sql.slice(from, to).replace(/[^\n]/g, ' ');
  return {
    sql:
      sql.slice(0, first!.start) + blank(first!.start, first!.end) + sql.slice(first!.end, last!.start) + blank(last!.start, last!.end) + sql.slice(last!.end),
    wrapped,
  };
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
    // refused before anything runs: a statement that would end the request's transaction
    const { sql: body, wrapped } = withoutTransactionControl(sql, ctx.path);

    const tracked = ctx.state.metadata.tables.length + ctx.state.metadata.functions.length > 0;
    const diff = check && !readOnly && tracked;
    const before = diff ? ctx.state.cache.db : undefined;
    let results;
    try {
      await ctx.conn.query('savepoint svc_run_sql');
      results = await ctx.conn.multi(body);
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
    // a BEGIN … COMMIT block answers as its COMMIT did upstream
    if (wrapped || !last || last.command !== 'SELECT' || (last.fields.length === 0 && last.rows.length === 0 && last.command !== 'SELECT')) {
      return { result_type: 'CommandOk', result: null };
    }
    return { result_type: 'TuplesOk', result: [last.fields, ...last.rows] };
  },
});
