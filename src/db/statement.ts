/**
 * A statement and its result as every pool (pg, PGlite) and the batch (batch.ts) see them.
 */
export interface QueryResultLike {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rows are whatever the SQL selected; callers read the columns they asked for
  rows: any[];
  rowCount: number | null;
  fields?: Array<{ name: string }>;
  command?: string;
}

/** A statement of a pipeline; `name` makes it a named prepared statement. */
export interface Statement {
  text: string;
  values?: unknown[];
  name?: string;
}

/** The part of node-postgres' Connection a submittable writes to (batch.ts, prepared.ts). */
export interface ProtocolConnection {
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  stream: { cork?: () => void; uncork?: () => void };
  parse(c: { text: string; name: string; types: unknown[] }): void;
  bind(c: { statement: string; values: unknown[] }): void;
  describe(c: { type: 'P'; name: string }): void;
  execute(c: { portal: string; rows: number }): void;
  sync(): void;
}

/** rowCount and command of a CommandComplete tag (`SELECT 3`, `INSERT 0 1`) */
export function commandTag(text: string): { rowCount: number | null; command: string | undefined } {
  const words = text.split(' ');
  const n = Number(words.at(-1));
  return { rowCount: Number.isFinite(n) ? n : null, command: words[0] };
}

/**
 * The end of a submittable's exchange (batch.ts, prepared.ts): settled once, by the first error or
 * by ReadyForQuery; the messages neither kind of statement expects are ignored.
 */
export abstract class SettledOnce {
  private settled = false;
  /** called once: `err` null after ReadyForQuery */
  protected abstract settle(err: Error | null): void;
  protected finish(err: Error | null): void {
    if (this.settled) return;
    this.settled = true;
    this.settle(err);
  }
  handleReadyForQuery(): void {
    this.finish(null);
  }
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}
}

/** Writes a submittable's messages and the closing Sync as one corked write (one packet, not one per message). */
export function writeCorked(connection: ProtocolConnection, write: () => void): null {
  connection.stream.cork?.();
  try {
    write();
    connection.sync();
  } finally {
    connection.stream.uncork?.();
  }
  return null;
}

/** The error of a statement whose request's client went away (cancelled, as PostgreSQL's 57014 reads). */
export function clientWentAway(): Error & { code: string } {
  return Object.assign(new Error('canceling statement due to user request: the client went away'), { code: '57014' });
}
