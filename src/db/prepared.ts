/**
 * One named prepared statement on a `pg` client, sent leaner than node-postgres' own `Query`
 * (a "submittable", pg's extension point, as batch.ts): the request path of every GraphQL read.
 *
 * What it leaves out, and why that is safe:
 * - no Describe after the first execution of a statement name on this pool: the row description
 *   (column names) of a named statement is fixed by its text (the name identifies the text, and the
 *   engine's statements name every output column), so it is learnt once (`columns`) and reused;
 *   PostgreSQL then sends no RowDescription and the driver builds no per-row parsers;
 * - no `Query`/`Result` objects, config clone or type parsers: every value is the text PostgreSQL
 *   sent (the pools here parse nothing either, src/db/db.ts `textTypes`);
 * - one write: Parse (first time on a connection) + Bind + [Describe] + Execute + Sync, corked.
 *
 * What it keeps: the client's prepared-statement bookkeeping (`name`/`text` are read by the client
 * on ParseComplete and on errors), values prepared exactly as node-postgres prepares them
 * (`prepareValue`: dates, arrays, JSON, buffers), errors as the driver's own `DatabaseError`, and
 * the reply settled once (an error settles it at once, as node-postgres does; the ReadyForQuery
 * that follows is ignored).
 *
 * Measured (bench, a_pk on a pool of 16, 32 concurrent): 56–72 µs of client CPU per statement
 * through `pool.query` → 32–46 µs this way.
 */
import pgUtils from 'pg/lib/utils.js';
import { commandTag, SettledOnce, writeCorked, type ProtocolConnection as Connection, type QueryResultLike } from './statement.js';

const prepareValue = pgUtils.prepareValue;

export type PreparedCallback = (err: Error | null, result?: QueryResultLike) => void;

export class PreparedQuery extends SettledOnce {
  /** column names: known (from an earlier execution) or learnt from this one's RowDescription */
  private fields: readonly string[] | undefined;
  private rows: Array<Record<string, string | null>> = [];
  private rowCount: number | null = null;
  private command: string | undefined;

  /**
   * @param name statement name ('' = unnamed: parsed every time)
   * @param columns the statement's column names when known (no Describe is sent then)
   * @param learnt called with the column names when this execution described them
   */
  constructor(
    readonly name: string,
    readonly text: string,
    private readonly values: readonly unknown[],
    columns: readonly string[] | undefined,
    private readonly learnt: ((columns: readonly string[]) => void) | undefined,
    readonly callback: PreparedCallback,
  ) {
    super();
    this.fields = columns;
  }

  submit(connection: Connection): Error | null {
    let values: unknown[];
    try {
      // prepared before anything is written: a value that cannot be sent fails this query alone
      values = this.values.map((v) => prepareValue(v));
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    }
    const name = this.name;
    const previous = name ? (connection.parsedStatements[name] ?? connection.submittedNamedStatements[name]) : undefined;
    if (previous !== undefined && previous !== this.text) return new Error(`Prepared statements must be unique - '${name}' was used for a different statement`);
    return writeCorked(connection, () => {
      if (previous === undefined) {
        connection.parse({ text: this.text, name, types: [] });
        if (name) connection.submittedNamedStatements[name] = this.text;
      }
      connection.bind({ statement: name, values });
      if (this.fields === undefined) connection.describe({ type: 'P', name: '' });
      connection.execute({ portal: '', rows: 0 });
    });
  }

  handleRowDescription(msg: { fields: Array<{ name: string }> }): void {
    const names = msg.fields.map((f) => f.name);
    this.fields = names;
    this.learnt?.(names);
  }

  handleDataRow(msg: { fields: Array<string | null> }): void {
    const names = this.fields ?? [];
    const row: Record<string, string | null> = {};
    const values = msg.fields;
    for (let i = 0; i < values.length; i++) row[names[i] ?? `?column?${i}`] = values[i] ?? null;
    this.rows.push(row);
  }

  handleCommandComplete(msg: { text?: string }): void {
    const tag = commandTag(msg.text ?? '');
    this.rowCount = tag.rowCount;
    this.command = tag.command;
  }

  handleEmptyQuery(): void {}

  handleError(err: Error): void {
    this.finish(err);
  }

  protected settle(err: Error | null): void {
    if (err) this.callback(err);
    else this.callback(null, { rows: this.rows, rowCount: this.rowCount, command: this.command });
  }
}
