/**
 * Asynchronous actions on the delivery subsystem: `svc_catalog.hdb_action_log` as a
 * DeliveryQueue. A call is claimed once (`created` → `processing` with a lease, FOR UPDATE SKIP
 * LOCKED, so two processes never call the handler for one action id; a dead process's calls are
 * claimable again when their lease runs out), its handler is called with the request the mutation
 * stored, and the checked response (status `completed`) or the error (status `error`, upstream's
 * `{path, error, code}`) is written back, conditional on the lease still being ours. Calls are not
 * retried (upstream neither).
 */
import type { Db } from '../db/db.js';
import type { DeliveryJob, DeliveryQueue, FinishedTry } from '../delivery/worker.js';
import { redactUrl } from '../delivery/http.js';
import { SvcError } from '../errors.js';
import type { ActionModel } from '../model/actions.js';
import { actionRequest, readResponse, type ActionRequest } from './webhook.js';
import { parseJsonExact, jsonText } from '../json.js';

const CLAIM = `
with due as (
  select id from svc_catalog.hdb_action_log
  where (status = 'created' or (status = 'processing' and (locked_until is null or locked_until < now())))
    and action_name = any($3::text[])
  order by created_at
  limit $2
  for update skip locked
)
update svc_catalog.hdb_action_log l
   set status = 'processing', locked_by = $1, locked_until = now() + make_interval(secs => $4)
  from due
 where l.id = due.id
returning l.id::text as id, l.action_name, l.input_payload::text as input, l.request_headers::text as headers,
  l.session_variables::text as session, (extract(epoch from l.created_at) * 1000)::float8 as created_ms, l.trace_context`;

const FINISH = `
update svc_catalog.hdb_action_log l
   set status = o.status, response_payload = o.response, errors = o.errors, response_received_at = now(),
       locked_by = null, locked_until = null
  from unnest($2::uuid[], $3::text[], $4::jsonb[], $5::jsonb[]) as o(id, status, response, errors)
 where l.id = o.id and l.locked_by = $1`;

export interface ActionJobContext {
  action: ActionModel;
  request: ActionRequest;
}

/** The stored outcome of one call: the response payload, or the error as upstream encodes it. */
export function outcomeOf(
  ctx: ActionJobContext,
  t: FinishedTry<ActionJobContext>,
): { status: 'completed' | 'error'; response: string | null; errors: string | null } {
  const o = t.outcome;
  const err = (e: SvcError) => ({ status: 'error' as const, response: null, errors: JSON.stringify({ path: e.path, error: e.message, code: e.code }) });
  if (o.status === null) return err(new SvcError(500, 'unexpected', 'http exception when calling webhook'));
  try {
    const { text } = readResponse(ctx.action, ctx.request, { status: o.status, headers: o.responseHeaders ?? [], text: o.body ?? '' });
    return { status: 'completed', response: text, errors: null };
  } catch (e) {
    if (e instanceof SvcError) return err(e);
    throw e;
  }
}

export class AsyncActionQueue implements DeliveryQueue<ActionJobContext> {
  readonly kind = 'action';

  /** `actions()`: the consistent actions of the current schema cache */
  constructor(private readonly actions: () => Map<string, ActionModel>) {}

  async claim(db: Db, owner: string, limit: number, leaseSec: number): Promise<DeliveryJob<ActionJobContext>[]> {
    const known = [...this.actions().values()].filter((a) => a.kind === 'asynchronous');
    if (!known.length) return [];
    const r = await db.query(CLAIM, [owner, limit, known.map((a) => a.name), leaseSec]);
    const jobs: DeliveryJob<ActionJobContext>[] = [];
    const unusable: string[] = [];
    for (const row of r.rows as Array<Record<string, unknown>>) {
      const id = String(row.id);
      const action = known.find((a) => a.name === row.action_name)!;
      let request: ActionRequest;
      try {
        request = actionRequest(action, parseJsonExact(String(row.input)), JSON.parse(String(row.session)), JSON.parse(String(row.headers)));
      } catch {
        // the handler URL or a header names a variable unset right now: leave the call for later
        unusable.push(id);
        continue;
      }
      const context: ActionJobContext = { action, request };
      jobs.push({
        id,
        url: request.url,
        headers: request.headers,
        body: jsonText(request.body),
        timeoutMs: action.timeoutSec * 1000,
        logUrl: redactUrl(request.url),
        fullBody: true,
        tries: 0,
        maxRetries: 0,
        retryIntervalSec: 0,
        createdAt: new Date(Number(row.created_ms)),
        context,
        ...(row.trace_context ? { traceparent: String(row.trace_context) } : {}),
      });
    }
    if (unusable.length) await this.release(db, owner, unusable);
    return jobs;
  }

  async finish(db: Db, owner: string, done: FinishedTry<ActionJobContext>[]): Promise<void> {
    const out = done.map((t) => outcomeOf(t.job.context, t));
    await db.query(FINISH, [owner, done.map((d) => d.job.id), out.map((o) => o.status), out.map((o) => o.response), out.map((o) => o.errors)]);
  }

  async renew(db: Db, owner: string, ids: string[], leaseSec: number): Promise<void> {
    await db.query('update svc_catalog.hdb_action_log set locked_until = now() + make_interval(secs => $3) where id = any($2::uuid[]) and locked_by = $1', [
      owner,
      ids,
      leaseSec,
    ]);
  }

  async release(db: Db, owner: string, ids: string[]): Promise<void> {
    await db.query(
      "update svc_catalog.hdb_action_log set status = 'created', locked_by = null, locked_until = null where id = any($2::uuid[]) and locked_by = $1",
      [owner, ids],
    );
  }

  async depth(db: Db): Promise<number> {
    const r = await db.query("select count(*)::int as n from svc_catalog.hdb_action_log where status in ('created', 'processing')");
    return Number((r.rows[0] as { n: unknown }).n);
  }
}
