/**
 * Several statements in ONE implicit transaction and one round trip, for a
 * `pg` client: Parse/Bind/Describe/Execute for each statement, then a single
 * Sync. PostgreSQL runs them in order as one transaction; when one fails it
 * skips the rest up to the Sync and rolls everything back. This is how a
 * mutation sets the session (`svc.user`) and writes, atomically, at the
 * cost of one round trip and without BEGIN/COMMIT statements.
 *
 * node-postgres has no such call; this is a "submittable" (its extension
 * point, as pg-cursor uses). The client hands every backend message to the
 * active submittable; `name`/`text` follow the statement being answered so
 * the client's own prepared-statement bookkeeping stays right.
 */
import { commandTag, SettledOnce, writeCorked, type ProtocolConnection as Connection, type QueryResultLike, type Statement } from './statement.js';

/** The error of a batch, with the index of the statement that failed. */
export interface BatchError extends Error {
  batchIndex?: number;
}

export class Batch extends SettledOnce {
  private index = 0;
  private fields: string[] = [];
  private rows: Record<string, string | null>[] = [];
  private readonly results: QueryResultLike[] = [];
  private readonly parsedHere: string[] = [];

  constructor(
    private readonly statements: readonly Statement[],
    private readonly usePrepared: boolean,
    private readonly done: (err: BatchError | null, results?: QueryResultLike[]) => void,
  ) {
    super();
  }

  /** the statement being answered (the client records parsed names through these) */
  get name(): string | undefined {
    return this.usePrepared ? this.statements[this.index]?.name : undefined;
  }

  get text(): string | undefined {
    return this.statements[this.index]?.text;
  }

  submit(connection: Connection): Error | null {
    return writeCorked(connection, () => {
      for (const st of this.statements) {
        const name = this.usePrepared && st.name ? st.name : '';
        if (!name || (connection.parsedStatements[name] === undefined && connection.submittedNamedStatements[name] === undefined)) {
          connection.parse({ text: st.text, name, types: [] });
          if (name) {
            connection.submittedNamedStatements[name] = st.text;
            this.parsedHere.push(name);
          }
        }
        connection.bind({ statement: name, values: st.values ?? [] });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '', rows: 0 });
      }
    });
  }

  handleRowDescription(msg: { fields: Array<{ name: string }> }): void {
    this.fields = msg.fields.map((f) => f.name);
  }

  handleDataRow(msg: { fields: Array<string | null> }): void {
    const row: Record<string, string | null> = {};
    for (let i = 0; i < this.fields.length; i++) row[this.fields[i]!] = msg.fields[i] ?? null;
    this.rows.push(row);
  }

  handleCommandComplete(msg: { text?: string }): void {
    this.results.push({ rows: this.rows, ...commandTag(msg.text ?? '') });
    this.rows = [];
    this.fields = [];
    this.index++;
  }

  handleEmptyQuery(): void {
    this.handleCommandComplete({});
  }

  handleError(err: BatchError, connection?: Connection): void {
    err.batchIndex = this.index;
    // statements after the failed one were skipped: they are not prepared on the server
    if (connection) {
      for (const name of this.parsedHere) {
        if (connection.parsedStatements[name] === undefined) delete connection.submittedNamedStatements[name];
      }
    }
    this.finish(err);
  }

  protected settle(err: BatchError | null): void {
    if (err) this.done(err);
    else this.done(null, this.results);
  }
}
