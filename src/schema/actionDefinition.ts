/**
 * An action definition as upstream's aeson parser reads it (unknown keys ignored), into the shape
 * it is stored and exported in (upstream's ToJSON: arguments, output_type, headers,
 * forward_client_headers, handler, type, and kind for mutations). create_action/update_action parse
 * their argument with it; the schema build parses stored definitions with it too, so a malformed one
 * from replace_metadata is an inconsistent action, not a crash.
 */
import { SvcError } from '../errors.js';
import { MAX_TIMEOUT_SEC } from '../core/limits.js';
import { ArgReader, expectArray } from '../document/args.js';

const parseFailed = (message: string, path: string) => new SvcError(400, 'parse-failed', message, path);
const lenient = (v: unknown, path: string) => new ArgReader(v, path, 'Object', false);

function parseHeaders(v: unknown, path: string): Array<{ name: string; value?: string; value_from_env?: string }> {
  return expectArray(v, path).map((h, i) => {
    const r = lenient(h, `${path}[${i}]`);
    const name = r.string('name');
    if (r.has('value')) return { name, value: r.string('value') };
    if (r.has('value_from_env')) return { name, value_from_env: r.string('value_from_env') };
    throw parseFailed('expecting either "value" or "value_from_env" for a header', r.path);
  });
}

/** The definition as stored and exported (upstream's ToJSON: arguments, output_type, headers, forward_client_headers, handler, type, kind). */
export function parseActionDefinition(v: unknown, path: string): Record<string, unknown> {
  const d = lenient(v, path);
  const rawArgs = d.raw('arguments');
  const args = rawArgs === undefined || rawArgs === null ? [] : expectArray(rawArgs, d.sub('arguments'));
  const seen = new Set<string>();
  const argumentsOut = args.map((a, i) => {
    const r = lenient(a, `${d.sub('arguments')}[${i}]`);
    const name = r.name('name');
    const type = r.string('type');
    const description = r.string('description', true);
    if (!/^[_A-Za-z][_0-9A-Za-z]*$/.test(name)) throw parseFailed(`${JSON.stringify(name)} is not a valid GraphQL name`, r.sub('name'));
    if (seen.has(name)) throw new SvcError(400, 'invalid-params', `the argument ${JSON.stringify(name)} is defined more than once`, r.path);
    seen.add(name);
    return { name, type, ...(description !== undefined ? { description } : {}) };
  });
  const outputType = d.string('output_type');
  const handler = d.string('handler');
  const headersRaw = d.raw('headers');
  const headers = headersRaw === undefined || headersRaw === null ? [] : parseHeaders(headersRaw, d.sub('headers'));
  const forward = d.bool('forward_client_headers', false);
  const type = d.string('type', true) ?? 'mutation';
  if (type !== 'mutation' && type !== 'query') throw parseFailed(`expected mutation or query, but found ${type}`, d.sub('type'));
  const out: Record<string, unknown> = { arguments: argumentsOut, output_type: outputType, headers, forward_client_headers: forward, handler, type };
  if (type === 'mutation') {
    const kind = d.string('kind', true) ?? 'synchronous';
    if (kind !== 'synchronous' && kind !== 'asynchronous') throw parseFailed(`expected synchronous or asynchronous, but found ${kind}`, d.sub('kind'));
    out.kind = kind;
  }
  const timeout = d.int('timeout');
  if (timeout !== undefined) {
    if (timeout <= 0) throw parseFailed('timeout must be a positive number of seconds', d.sub('timeout'));
    // Node's timers hold at most 24.8 days; a longer timeout would fire at once
    if (timeout > MAX_TIMEOUT_SEC) throw parseFailed(`timeout must be at most ${MAX_TIMEOUT_SEC} seconds`, d.sub('timeout'));
    out.timeout = timeout;
  }
  return out;
}
