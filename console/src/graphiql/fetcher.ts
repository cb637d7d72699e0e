/**
 * GraphiQL's fetcher: queries and mutations are POSTed to /v1/graphql; subscriptions use the
 * server's websocket protocol (`graphql-ws` sub-protocol of subscriptions-transport-ws), with the
 * headers sent in the connection_init payload, never in the URL.
 */
import { ADMIN_SECRET_HEADER, adminHeaders } from '../api';

export interface FetchParams {
  query: string;
  variables?: unknown;
  operationName?: string | null;
}

/** The request headers: the admin secret (unless disabled or set by the person), then theirs. */
export function requestHeaders(editorHeaders: Record<string, unknown> | undefined, sendSecret: boolean): Record<string, string> {
  const own: Record<string, string> = {};
  for (const [k, v] of Object.entries(editorHeaders ?? {})) if (v !== undefined && v !== null) own[k] = String(v);
  const setsSecret = Object.keys(own).some((k) => k.toLowerCase() === ADMIN_SECRET_HEADER.toLowerCase());
  return { ...(sendSecret && !setsSecret ? adminHeaders() : {}), ...own };
}

export function isSubscription(query: string, operationName?: string | null): boolean {
  // cheap check without parsing: the named operation (or the only one) starts with `subscription`
  const ops = [...query.replace(/#[^\n]*/g, '').matchAll(/\b(query|mutation|subscription)\b\s*([_A-Za-z][_0-9A-Za-z]*)?/g)];
  const op = operationName ? ops.find((m) => m[2] === operationName) : ops[0];
  return op?.[1] === 'subscription';
}

export async function postGraphql(params: FetchParams, headers: Record<string, string>): Promise<unknown> {
  const res = await fetch('/v1/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(params),
  });
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return { errors: [{ message: `HTTP ${res.status}: ${text.slice(0, 500)}` }] };
  }
}

/** One subscription over its own websocket, as an async iterable of results. */
export function subscribe(params: FetchParams, headers: Record<string, string>): AsyncIterable<unknown> & { return(): Promise<IteratorResult<unknown>> } {
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/graphql`;
  const ws = new WebSocket(url, 'graphql-ws');
  const queue: unknown[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  const push = (v: unknown) => {
    queue.push(v);
    wake?.();
  };
  const finish = () => {
    done = true;
    wake?.();
  };
  ws.onopen = () => {
    ws.send(JSON.stringify({ type: 'connection_init', payload: { headers } }));
    ws.send(JSON.stringify({ id: '1', type: 'start', payload: params }));
  };
  ws.onmessage = (ev) => {
    let msg: { type: string; payload?: unknown };
    try {
      msg = JSON.parse(String(ev.data));
    } catch {
      return;
    }
    if (msg.type === 'data') push(msg.payload);
    else if (msg.type === 'error') {
      push(msg.payload);
      finish();
    } else if (msg.type === 'connection_error') {
      push({ errors: [{ message: typeof msg.payload === 'string' ? msg.payload : JSON.stringify(msg.payload) }] });
      finish();
    } else if (msg.type === 'complete') finish();
  };
  ws.onerror = () => {
    push({ errors: [{ message: 'websocket error' }] });
    finish();
  };
  ws.onclose = finish;
  const stop = async (): Promise<IteratorResult<unknown>> => {
    done = true;
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ id: '1', type: 'stop' }));
    ws.close();
    wake?.();
    return { done: true, value: undefined };
  };
  const iterator: AsyncIterator<unknown> = {
    async next() {
      for (;;) {
        if (queue.length) return { done: false, value: queue.shift() };
        if (done) return { done: true, value: undefined };
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
      }
    },
    return: stop,
  };
  return { [Symbol.asyncIterator]: () => iterator, return: stop };
}
