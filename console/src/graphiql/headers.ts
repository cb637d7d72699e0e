/** Pure helpers of the API explorer: the editor's JSON texts and the session they describe. */

/** Parses an editor's JSON object ('' and whitespace mean {}); throws with the editor's name. */
export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  if (!text || !text.trim()) return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new Error(`${what}: not valid JSON (${(e as Error).message})`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${what}: expected a JSON object`);
  return v as Record<string, unknown>;
}

/**
 * The session (`user` of /v1/graphql/explain) of request headers: every X-Svc-* header except the
 * admin secret, with lower-case names.
 */
export function sessionOf(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase();
    if (name.startsWith('x-svc-') && name !== 'x-svc-admin-secret' && v !== null && v !== undefined) out[name] = String(v);
  }
  return out;
}
