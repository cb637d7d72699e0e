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
