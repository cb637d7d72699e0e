/**
 * The project: `config.yaml` (config version 2, upstream's keys), its directories, and where the
 * server connection comes from. Precedence, as upstream: flag > environment variable > the
 * project's .env file > config.yaml > default.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { configError, noProject } from './messages.js';
import { readYamlFile } from './yamlio.js';

export const CONFIG_FILE = 'config.yaml';
export const DEFAULT_ENDPOINT = 'http://localhost:8080';

export interface ProjectConfig {
  version: number;
  endpoint?: string;
  admin_secret?: string;
  metadata_directory: string;
  migrations_directory: string;
  seeds_directory: string;
  insecure_skip_tls_verify?: boolean;
  certificate_authority?: string;
  api_paths: { query: string; pg_dump: string };
}

export interface Project {
  /** absolute project directory */
  dir: string;
  /** whether a config.yaml was found (commands that only talk to a server work without one) */
  hasConfig: boolean;
  config: ProjectConfig;
  migrationsDir: string;
  metadataDir: string;
  seedsDir: string;
}

/** The directory of the nearest config.yaml: `start` itself or a parent. */
export function findProjectDir(start: string): string | undefined {
  let dir = resolve(start);
  for (;;) {
    if (existsSync(join(dir, CONFIG_FILE))) return dir;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

const str = (v: unknown, key: string, file: string): string | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' && typeof v !== 'number') throw configError(file, `${key} must be a string`);
  return String(v);
};

export function parseProjectConfig(raw: unknown, file: string): ProjectConfig {
  if (raw === null || raw === undefined) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw configError(file, 'expected a mapping of keys (version, endpoint, admin_secret, metadata_directory, …)');
  const r = raw as Record<string, unknown>;
  const version = r.version === undefined ? 2 : Number(r.version);
  if (version !== 2) {
    throw configError(
      file,
      `config version ${JSON.stringify(r.version)} is not supported: this CLI reads config version 2 (metadata as a directory of YAML files, SQL migrations); set "version: 2" and export the metadata again`,
    );
  }
  const paths = (r.api_paths ?? {}) as Record<string, unknown>;
  if (typeof paths !== 'object' || Array.isArray(paths)) throw configError(file, 'api_paths must be a mapping');
  const skip = r.insecure_skip_tls_verify;
  if (skip !== undefined && typeof skip !== 'boolean') throw configError(file, 'insecure_skip_tls_verify must be true or false');
  return {
    version,
    endpoint: str(r.endpoint, 'endpoint', file),
    admin_secret: str(r.admin_secret, 'admin_secret', file) ?? str(r.access_key, 'access_key', file),
    metadata_directory: str(r.metadata_directory, 'metadata_directory', file) ?? 'metadata',
    migrations_directory: str(r.migrations_directory, 'migrations_directory', file) ?? 'migrations',
    seeds_directory: str(r.seeds_directory, 'seeds_directory', file) ?? 'seeds',
    ...(skip !== undefined ? { insecure_skip_tls_verify: skip } : {}),
    ...(r.certificate_authority !== undefined ? { certificate_authority: str(r.certificate_authority, 'certificate_authority', file) } : {}),
    api_paths: {
      query: str(paths.query, 'api_paths.query', file) ?? 'v1/query',
      pg_dump: str(paths.pg_dump, 'api_paths.pg_dump', file) ?? 'v1alpha1/pg_dump',
    },
  };
}

/**
 * Where the project is: `--project`, or the nearest config.yaml from the current directory up.
 * `required`: without a config.yaml it is an error; else the current directory (defaults apply).
 */
export function locateProject(projectFlag: string | undefined, cwd: string, required: boolean): { dir: string; hasConfig: boolean } {
  if (projectFlag !== undefined) {
    const dir = resolve(cwd, projectFlag);
    const hasConfig = existsSync(join(dir, CONFIG_FILE)) && statSync(join(dir, CONFIG_FILE)).isFile();
    if (!hasConfig && required) throw noProject(dir, true);
    return { dir, hasConfig };
  }
  const dir = findProjectDir(cwd);
  if (dir) return { dir, hasConfig: true };
  if (required) throw noProject(resolve(cwd), false);
  return { dir: resolve(cwd), hasConfig: false };
}

/** Reads the config.yaml of a located project (defaults without one). */
export function loadProject(loc: { dir: string; hasConfig: boolean }, env: NodeJS.ProcessEnv): Project {
  const { dir, hasConfig } = loc;
  const config = parseProjectConfig(hasConfig ? readYamlFile(join(dir, CONFIG_FILE), CONFIG_FILE) : {}, CONFIG_FILE);
  // the directories may be overridden by environment variables, as upstream
  if (env.SVC_GRAPHQL_METADATA_DIRECTORY) config.metadata_directory = env.SVC_GRAPHQL_METADATA_DIRECTORY;
  if (env.SVC_GRAPHQL_MIGRATIONS_DIRECTORY) config.migrations_directory = env.SVC_GRAPHQL_MIGRATIONS_DIRECTORY;
  const abs = (p: string) => (isAbsolute(p) ? p : join(dir, p));
  return {
    dir,
    hasConfig,
    config,
    migrationsDir: abs(config.migrations_directory),
    metadataDir: abs(config.metadata_directory),
    seedsDir: abs(config.seeds_directory),
  };
}

/**
 * The variables of a .env file (`KEY=value`, `export KEY=value`, quoted values, # comments);
 * undefined when there is no such file.
 */
export function readEnvFile(path: string): Record<string, string> | undefined {
  if (!existsSync(path)) return undefined;
  const out: Record<string, string> = {};
  for (const raw of readFileSync(path, 'utf8').split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    let v = m[2]!;
    if ((v.startsWith('"') && v.endsWith('"') && v.length >= 2) || (v.startsWith("'") && v.endsWith("'") && v.length >= 2)) {
      const dq = v.startsWith('"');
      v = v.slice(1, -1);
      if (dq) v = v.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    } else {
      v = v.replace(/\s+#.*$/, '');
    }
    out[m[1]!] = v;
  }
  return out;
}
