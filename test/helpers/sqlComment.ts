/**
 * Reading back the statement PostgreSQL ran, with its sqlcommenter comment: a table `probe` (one
 * row, id 1) whose computed field `statement` answers with current_query(), the text of the
 * statement that reads it as the client sent it.
 */
import { query } from './server.js';

/** creates and tracks `probe` with its `statement` field; `sql` and `args` (more /v1/query ops) follow in the same bulk */
export async function createStatementProbe(url: string, more: { sql?: string; args?: unknown[] } = {}): Promise<void> {
  await query(url, {
    type: 'bulk',
    args: [
      {
        type: 'run_sql',
        args: {
          sql: `create table probe (id int primary key); insert into probe values (1);
            create function probe_statement(p probe) returns text language sql stable as $$ select current_query() $$;${more.sql ?? ''}`,
        },
      },
      { type: 'track_table', args: { table: 'probe' } },
      { type: 'add_computed_field', args: { table: 'probe', name: 'statement', definition: { function: 'probe_statement' } } },
      ...(more.args ?? []),
    ],
  });
}

/** the trace id of the `/*traceparent='00-<trace>-<span>-01'*\/` comment in a statement's text, if any */
export const commentTrace = (text: string): string | undefined => /\/\*traceparent='00-([0-9a-f]{32})-[0-9a-f]{16}-01'\*\//.exec(text)?.[1];
