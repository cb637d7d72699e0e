/**
 * The bookkeeping both subscription managers share (src/subscriptions/multiplexed.ts for live
 * queries, src/subscriptions/stream.ts for streams): subscribers of one plan form a cohort, and
 * subscribers with the same variable values share a row of it (one row of the cohort's batch
 * statement, whose `result_id` is the row's `id`).
 */

/** A row of a cohort: its id in the batch statement and its subscribers. */
export interface CohortRow<S> {
  id: number;
  subs: Set<S>;
}

/** What a cohort keeps of its rows: by key (the values), by id (the results), and its subscriber count. */
export interface CohortRows<R> {
  rows: Map<string, R>;
  byId: Map<number, R>;
  subscribers: number;
}

/** The row ids of a manager: int4 (the statements' `result_id`), wrapping round; old rows are long gone by then. */
export class RowIds {
  private last = 0;

  next(): number {
    const id = ++this.last;
    if (this.last >= 2 ** 31 - 1) this.last = 0;
    return id;
  }
}

/** Adds `sub` to the cohort's row of `key`, made by `make(id)` when there is none; the row. */
export function joinRow<S, R extends CohortRow<S>>(c: CohortRows<R>, key: string, sub: S, ids: RowIds, make: (id: number) => R): R {
  let row = c.rows.get(key);
  if (!row) {
    row = make(ids.next());
    c.rows.set(key, row);
    c.byId.set(row.id, row);
  }
  row.subs.add(sub);
  c.subscribers++;
  return row;
}

/**
 * Takes `sub` out of `row` (the cohort's row of `key`); a row left without subscribers leaves the
 * cohort. True when it did.
 */
export function leaveRow<S, R extends CohortRow<S>>(c: CohortRows<R>, row: R, key: string, sub: S): boolean {
  if (row.subs.delete(sub)) c.subscribers--;
  if (row.subs.size > 0 || c.rows.get(key) !== row) return false;
  c.rows.delete(key);
  c.byId.delete(row.id);
  return true;
}

/** A subscriber's plan against the new schema cache, or the error text it is sent when it no longer plans. */
export function replanned<P>(s: { replan(): P; errorText(e: unknown): string }): P | string {
  try {
    return s.replan();
  } catch (e) {
    return s.errorText(e);
  }
}
