/**
 * Response headers of third parties that reach the client, as upstream v1.3 forwards them: the
 * `Set-Cookie` headers of an action handler's and a remote schema's answers (reference/remote-
 * schemas/schema-auth.rst) are added to the HTTP response of the GraphQL request that caused them.
 * Over websockets there is no response to carry them (as upstream). Collected per request, keyed
 * by the request's header object (the one ExecContext.headers is), so no extra plumbing crosses
 * the executor.
 */
const byRequest = new WeakMap<object, string[]>();

/** At most this many cookies per request are passed on (each value already bounded by the response size). */
const MAX_COOKIES = 100;

/** Records the `Set-Cookie` values of a third party's response (raw header list) for the client. */
export function collectSetCookies(requestHeaders: object, raw: ReadonlyArray<{ name: string; value: string }> | undefined): void {
  if (!raw) return;
  for (const h of raw) {
    if (h.name.toLowerCase() !== 'set-cookie') continue;
    const list = byRequest.get(requestHeaders) ?? [];
    if (list.length >= MAX_COOKIES) return;
    list.push(h.value);
    byRequest.set(requestHeaders, list);
  }
}

/** The `Set-Cookie` values collected for a request (and forgets them). */
export function takeSetCookies(requestHeaders: object): string[] | undefined {
  const list = byRequest.get(requestHeaders);
  if (list) byRequest.delete(requestHeaders);
  return list;
}

/** Other headers the executor sets on a request's response (the response cache's), by the same key. */
const extraByRequest = new WeakMap<object, Record<string, string>>();

export function setResponseHeader(requestHeaders: object, name: string, value: string): void {
  const h = extraByRequest.get(requestHeaders);
  if (h) h[name] = value;
  else extraByRequest.set(requestHeaders, { [name]: value });
}

/** The headers set for a request (and forgets them). */
export function takeResponseHeaders(requestHeaders: object): Record<string, string> | undefined {
  const h = extraByRequest.get(requestHeaders);
  if (h) extraByRequest.delete(requestHeaders);
  return h;
}
