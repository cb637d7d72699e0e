/**
 * Running one websocket operation, whatever the sub-protocol (connection.ts registers it, the
 * adapters answer in their frames):
 *
 * - a query or mutation runs once: its result, then `complete`;
 * - a subscription runs once too, and that first run tells a request that fails before execution
 *   (an `error` frame) from one that runs; its result is sent, and it becomes a live query from that
 *   result on: multiplexed into its cohort (subscriptions/liveQueryManager.ts), or, when it has no
 *   database field, re-run alone (subscriptions/soloLiveQuery.ts);
 * - a streaming subscription (`<table>_stream`) has no first run: its batches come from its cohort
 *   (subscriptions/streamManager.ts), and an error ends it.
 *
 * Execution goes through `GraphQLHandlers.run` (server/graphql.ts), as for HTTP. The first run has a
 * tracing span (the handshake's traceparent as its parent) and its latency is observed (for a
 * subscription, until its first result).
 */
import { parse, type OperationDefinitionNode } from 'graphql';
import { tracing, type Span } from '../../core/tracing.js';
import { errorObject, errorResponse } from '../../execute/errors.js';
import type { GraphQLRequest } from '../../execute/interface.js';
import { SvcError } from '../../errors.js';
import type { LiveQueryHandle } from '../../subscriptions/liveQueryManager.js';
import { startLiveQuery, type LiveQuery } from '../../subscriptions/soloLiveQuery.js';
import type { StreamHandle } from '../../subscriptions/streamManager.js';
import type { StreamPlan } from '../../subscriptions/streamPlan.js';
import type { Session } from '../auth/session.js';
import { toSvcError } from '../errors.js';
import type { OperationConnection as Connection, RunningOperation as Operation } from './context.js';
import { performance } from 'node:perf_hooks';

/** Runs a registered operation under session `s`. */
export function runOperation(conn: Connection, op: Operation, s: Session): void {
  const { engine, gql } = conn.ctx;
  const firstRun = () => runFirst(conn, op, s);
  if (operationKind(op.request) !== 'subscription') return firstRun();
  void gql.planStream(engine, s, op.request, conn.headers, { relay: conn.relay }).then(
    (plan) => {
      if (!op.active) return;
      if (!plan) return firstRun();
      const h = streamQuery(conn, op, s, plan);
      op.stop = () => h.stop();
    },
    (e: unknown) => {
      if (!op.active) return;
      // an error before execution, as the first run would answer it
      if (!(e instanceof SvcError)) return firstRun();
      op.failed(e);
    },
  );
}

/** runs an operation once; a subscription's first result starts its live query */
function runFirst(conn: Connection, op: Operation, s: Session): void {
  const { id, request } = op;
  const info = { opType: 'unknown' };
  const t = tracing;
  const tp = conn.headers.traceparent;
  const span = t?.start(
    'svc.websocket.operation',
    { 'svc.websocket.operation_id': id, ...(request.operationName ? { 'graphql.operation.name': request.operationName } : {}) },
    { kind: 'server', traceparent: typeof tp === 'string' ? tp : null },
  );
  const t0 = performance.now();
  const firstResult = run(conn, s, request, true, info, span);
  void firstResult.then((first) => {
    const failed = first instanceof SvcError ? { code: first.code, error: first.message } : executionError(first);
    conn.ctx.engine.histograms.requestDuration.observe3((performance.now() - t0) / 1000, 'websocket', info.opType, failed ? 'error' : 'success');
    if (span) {
      span.setAttribute('graphql.operation.type', info.opType);
      if (failed) t!.fail(span, String(failed.code ?? 'unexpected'), String(failed.error ?? ''));
      span.end();
    }
    if (!op.active) return;
    if (first instanceof SvcError) return op.failed(first);
    if (operationKind(request) !== 'subscription') {
      op.end();
      const failed = executionError(first);
      if (failed) op.log({ type: 'query_err', detail: failed });
      op.result(first);
      op.complete();
      op.log({ type: 'completed' });
      return;
    }
    op.result(first);
    const h = liveQuery(conn, op, s, first);
    op.stop = () => h.stop();
  });
}

/** a streaming subscription: its cohort pushes each new batch; an error ends it */
function streamQuery(conn: Connection, op: Operation, s: Session, plan: StreamPlan): StreamHandle {
  const { engine, gql, streams } = conn.ctx;
  const errorText = (e: unknown) => errorResponse(e, conn.errorFormat());
  return streams.add(plan, {
    push: (text) => {
      if (op.active) op.result(text);
    },
    fail: (text) => {
      if (!op.active) return;
      op.end();
      const failed = executionError(text);
      if (failed) op.log({ type: 'query_err', detail: failed });
      op.result(text);
      op.complete();
    },
    ready: () => conn.drained,
    errorText,
    replan: () => {
      try {
        return (
          gql.planStreamNow(engine, s, op.request, conn.headers, { relay: conn.relay }) ??
          errorText(new SvcError(400, 'validation-failed', 'the subscription is no longer a streaming subscription', '$'))
        );
      } catch (e) {
        return errorText(e);
      }
    },
  });
}

/** the live query of a subscription whose first result was sent: multiplexed when it can be */
function liveQuery(conn: Connection, op: Operation, s: Session, first: string): LiveQueryHandle | LiveQuery {
  const { engine, gql, live } = conn.ctx;
  const errorText = (e: unknown) => errorResponse(e, conn.errorFormat());
  const plan = () => {
    try {
      return gql.planLive(engine, s, op.request, conn.headers, { relay: conn.relay });
    } catch {
      return null;
    }
  };
  const p = plan();
  if (p) {
    return live.add(
      p,
      {
        push: (text) => op.live(text),
        errorText,
        replan: () => {
          try {
            return (
              gql.planLive(engine, s, op.request, conn.headers, { relay: conn.relay }) ??
              errorText(new SvcError(400, 'validation-failed', 'the subscription no longer selects a database field', '$'))
            );
          } catch (e) {
            return errorText(e);
          }
        },
      },
      first,
    );
  }
  return startLiveQuery({
    first,
    sendFirst: false,
    run: () => run(conn, s, op.request, false) as Promise<string>,
    send: (out) => op.live(out),
    intervalMs: engine.config.liveQueriesRefetchInterval,
  });
}

/** the response text, or (with `rejectPreExec`) the SvcError of a request that failed before execution */
async function run(
  conn: Connection,
  s: Session,
  request: GraphQLRequest,
  rejectPreExec: boolean,
  info?: { opType: string },
  span?: Span,
): Promise<string | SvcError> {
  const { engine, gql } = conn.ctx;
  const v1alpha1 = conn.v1alpha1;
  try {
    // a start is a client's operation (rate-limited); a live query's refetch is not
    return await gql.run(engine, s, request, conn.headers, {
      v1alpha1,
      relay: conn.relay,
      legacyErrors: v1alpha1,
      rejectPreExec,
      client: rejectPreExec ? { ip: conn.req.socket.remoteAddress } : undefined,
      ...(info ? { info } : {}),
      ...(span ? { span } : {}),
    });
  } catch (e) {
    const err = e instanceof SvcError ? e : toSvcError(e);
    if (rejectPreExec) return err;
    const one = errorObject(err, { legacy: v1alpha1 });
    return JSON.stringify({ errors: [one] });
  }
}

function operationKind(req: GraphQLRequest): string | undefined {
  try {
    const doc = parse(req.query, { maxTokens: 20_000 });
    const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
    const op = req.operationName ? ops.find((o) => o.name?.value === req.operationName) : ops[0];
    return op?.operation;
  } catch {
    return undefined;
  }
}

/** The first error of an execution's response text (for the websocket-log line), if it failed. */
function executionError(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{"errors":')) return undefined;
  try {
    const e = (JSON.parse(text) as { errors: Array<Record<string, unknown> & { extensions?: { path?: string; code?: string }; message?: string }> }).errors[0];
    if (!e) return undefined;
    return e.extensions ? { path: e.extensions.path, error: e.message, code: e.extensions.code } : e;
  } catch {
    return undefined;
  }
}
