/** What a command's `run` gets: its arguments and flags, output, the project, a server client. */
import { resolve } from 'node:path';
import { HttpClient, type QueryClient } from './client.js';
import { usageError } from './messages.js';
import type { Output } from './output.js';
import { DEFAULT_ENDPOINT, loadProject, locateProject, readEnvFile, type Project } from './project.js';

/** A command of the CLI (parsed by args.ts) and the flags it takes. */
export type FlagType = 'string' | 'bool' | 'list';

export interface FlagSpec {
  name: string;
  short?: string;
  type: FlagType;
  /** shown after the flag in --help (`--up string`) */
  value?: string;
  description: string;
}

export interface CommandSpec {
  /** words after `svc` */
  path: string[];
  aliases?: string[];
  summary: string;
  /** `svc migrate create <name> [flags]` */
  usage: string;
  description?: string;
  examples: string[];
  flags: FlagSpec[];
  /** positional arguments accepted */
  args: { min: number; max: number };
  /** talks to a Svc server: the connection flags apply */
  server: boolean;
  /** exit codes this command uses besides 0 (documented in --help) */
  exits: number[];
  /** what an exit code means for this command, where the general text is not enough */
  exitNotes?: Record<number, string>;
  run(ctx: Context): Promise<number>;
}

export interface Parsed {
  flags: Map<string, string | boolean | string[]>;
  args: string[];
}

export class Context {
  private projectCache = new Map<boolean, Project>();
  private envCache: NodeJS.ProcessEnv | undefined;

  constructor(
    readonly spec: CommandSpec,
    private readonly parsed: Parsed,
    readonly out: Output,
    readonly cwd: string,
    private readonly processEnv: NodeJS.ProcessEnv,
  ) {}

  get args(): string[] {
    return this.parsed.args;
  }

  flag(name: string): string | undefined {
    const v = this.parsed.flags.get(name);
    return typeof v === 'string' ? v : undefined;
  }

  bool(name: string): boolean {
    return this.parsed.flags.get(name) === true;
  }

  has(name: string): boolean {
    return this.parsed.flags.has(name);
  }

  list(name: string): string[] {
    const v = this.parsed.flags.get(name);
    return Array.isArray(v) ? v : [];
  }

  /** A path given on the command line, relative to the current directory. */
  path(p: string): string {
    return resolve(this.cwd, p);
  }

  /**
   * The project (config.yaml found from --project or the current directory up). `required`: a
   * config.yaml must exist; else defaults apply without one.
   */
  project(required = true): Project {
    const cached = this.projectCache.get(required);
    if (cached) return cached;
    const loc = locateProject(this.flag('project'), this.cwd, required);
    const env = this.envFor(loc.dir);
    const p = loadProject(loc, env);
    this.projectCache.set(required, p);
    return p;
  }

  /** The environment: the process's, plus the project's .env file for variables not set. */
  envFor(projectDir: string): NodeJS.ProcessEnv {
    if (this.envCache) return this.envCache;
    const name = this.flag('envfile') ?? '.env';
    const fromFile = readEnvFile(resolve(projectDir, name)) ?? {};
    this.envCache = { ...fromFile, ...this.processEnv };
    return this.envCache;
  }

  /**
   * An HTTP client for the server: flag > environment (.env included) > config.yaml > default.
   * `headers`: more request headers (an admin secret among them wins over the configured one).
   */
  client(headers?: Record<string, string>): QueryClient {
    const p = this.project(false);
    const env = this.envFor(p.dir);
    const { endpoint } = this.connection();
    const adminSecret = headers?.['x-svc-admin-secret'] ?? this.connection().adminSecret;
    const skipEnv = env.SVC_GRAPHQL_INSECURE_SKIP_TLS_VERIFY;
    const insecure = this.has('insecure-skip-tls-verify')
      ? this.bool('insecure-skip-tls-verify')
      : skipEnv
        ? /^(true|t|1|yes)$/i.test(skipEnv)
        : (p.config.insecure_skip_tls_verify ?? false);
    const caFlag = this.flag('certificate-authority');
    const caOther = nonEmpty(env.SVC_GRAPHQL_CERTIFICATE_AUTHORITY) ?? p.config.certificate_authority;
    const ca = caFlag !== undefined ? this.path(caFlag) : caOther !== undefined ? resolve(p.dir, caOther) : undefined;
    return new HttpClient({
      endpoint,
      ...(adminSecret !== undefined ? { adminSecret } : {}),
      queryPath: nonEmpty(env.SVC_GRAPHQL_API_PATHS_QUERY) ?? p.config.api_paths.query,
      pgDumpPath: nonEmpty(env.SVC_GRAPHQL_API_PATHS_PG_DUMP) ?? p.config.api_paths.pg_dump,
      insecureSkipTlsVerify: insecure,
      ...(ca ? { certificateAuthority: ca } : {}),
      ...(headers ? { headers } : {}),
    });
  }

  /** The server's endpoint and admin secret: flag > environment (.env included) > config.yaml > default. */
  connection(): { endpoint: string; adminSecret?: string } {
    const p = this.project(false);
    const env = this.envFor(p.dir);
    const endpoint = this.flag('endpoint') ?? nonEmpty(env.SVC_GRAPHQL_ENDPOINT) ?? p.config.endpoint ?? DEFAULT_ENDPOINT;
    const adminSecret = this.flag('admin-secret') ?? nonEmpty(env.SVC_GRAPHQL_ADMIN_SECRET) ?? nonEmpty(env.SVC_GRAPHQL_ACCESS_KEY) ?? p.config.admin_secret;
    return { endpoint, ...(adminSecret !== undefined ? { adminSecret } : {}) };
  }

  usage(message: string): Error {
    return usageError(message, this.spec);
  }
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}
