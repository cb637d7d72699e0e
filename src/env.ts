/**
 * Values from the environment in metadata, one place for every kind of object (event and cron
 * triggers, scheduled events, actions, remote schemas): `{{NAME}}` templates in webhook URLs
 * (upstream's WebhookURL, syntax-defs.rst), `value_from_env` of configured headers, and
 * `*_from_env` names. A variable that is not set is a `400 not-exists` naming it, at metadata time
 * (the object is refused or inconsistent) and at each call (the variable may have gone since).
 */
import { SvcError } from './errors.js';

export type Env = NodeJS.ProcessEnv;

const TEMPLATE = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The error of an unset variable. */
export const envNotSet = (name: string): SvcError => new SvcError(400, 'not-exists', `environment variable ${JSON.stringify(name)} not set`);

/** A variable's value; unset: `400 not-exists`. */
export function fromEnv(name: string, env: Env = process.env): string {
  const v = env[name];
  if (v === undefined) throw envNotSet(name);
  return v;
}

/** The variables a `{{NAME}}` template names, in order. */
export function templateVariables(text: string): string[] {
  return [...text.matchAll(TEMPLATE)].map((m) => m[1]!);
}

/** `{{NAME}}` templates replaced by their variables' values; an unset one throws. */
export function resolveUrlTemplate(url: string, env: Env = process.env): string {
  return url.includes('{{') ? url.replace(TEMPLATE, (_, name: string) => fromEnv(name, env)) : url;
}

export interface HeaderConf {
  name: string;
  value?: string;
  value_from_env?: string;
}

/** Configured headers with `value` or `value_from_env`; an unset variable throws. */
export function resolveHeaders(conf: readonly HeaderConf[] | undefined, env: Env = process.env): Array<{ name: string; value: string }> {
  return (conf ?? []).map((h) => (h.value !== undefined ? { name: h.name, value: h.value } : { name: h.name, value: fromEnv(h.value_from_env!, env) }));
}

/** The variables of a URL template, `*_from_env` names and headers that are not set (for consistency checks). */
export function unsetVariables(
  o: { template?: string; names?: ReadonlyArray<string | undefined>; headers?: readonly HeaderConf[] },
  env: Env = process.env,
): string[] {
  const names = [...(o.template ? templateVariables(o.template) : []), ...(o.names ?? []), ...(o.headers ?? []).map((h) => h.value_from_env)];
  return names.filter((n): n is string => n !== undefined && env[n] === undefined);
}
