/** parseConfig: defaults, flags vs environment, bad values; the `svc` process on a bad flag. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, defaultConfig, helpText, OPTIONS, parseConfig } from '../src/config/config.js';
import { cleanEnv, runToExit } from './helpers/process.js';

const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseConfig(argv, env);

describe('parseConfig', () => {
  test('no flags, no environment: serve with the defaults', () => {
    const { command, config } = parse([]);
    assert.equal(command, 'serve');
    assert.deepEqual(config, defaultConfig());
    assert.equal(config.port, 8080);
    assert.equal(config.databaseUrl, undefined);
    assert.deepEqual([...config.enabledApis].sort(), ['config', 'graphql', 'metadata', 'pgdump']);
  });

  test('commands', () => {
    assert.equal(parse(['serve']).command, 'serve');
    assert.equal(parse(['--help']).command, 'help');
    assert.equal(parse(['-h']).command, 'help');
    assert.equal(parse(['version']).command, 'version');
    assert.equal(parse(['--version']).command, 'version');
    assert.throws(
      () => parse(['frobnicate']),
      (e: unknown) => e instanceof ConfigError && /unknown command "frobnicate"/.test(e.message),
    );
  });

  test('environment variables set options', () => {
    const { config } = parse([], {
      SVC_GRAPHQL_DATABASE_URL: 'postgres://u:p@db:5433/x',
      SVC_GRAPHQL_SERVER_PORT: '9090',
      SVC_GRAPHQL_ADMIN_SECRET: 's3cret',
      SVC_GRAPHQL_STRINGIFY_NUMERIC_TYPES: 'true',
      SVC_GRAPHQL_ENABLED_APIS: 'graphql, metadata',
      SVC_GRAPHQL_CORS_DOMAIN: 'https://a.example.com, http://*.b.example.com',
      SVC_GRAPHQL_TX_ISOLATION: 'SERIALIZABLE',
      SVC_GRAPHQL_AUTH_HOOK_MODE: 'post',
      SVC_GRAPHQL_JWT_SECRET: '{"type":"HS256","key":"0123456789abcdef0123456789abcdef"}',
    });
    assert.equal(config.databaseUrl, 'postgres://u:p@db:5433/x');
    assert.equal(config.port, 9090);
    assert.equal(config.adminSecret, 's3cret');
    assert.equal(config.stringifyNumericTypes, true);
    assert.deepEqual([...config.enabledApis].sort(), ['graphql', 'metadata']);
    assert.deepEqual(config.corsDomain, ['https://a.example.com', 'http://*.b.example.com']);
    assert.equal(config.txIsolation, 'serializable');
    assert.equal(config.authHookMode, 'POST');
    assert.deepEqual(config.jwtSecret, { type: 'HS256', key: '0123456789abcdef0123456789abcdef' });
  });

  test('--tracing-sql-comment: auto by default; always, never, and the boolean spellings of an earlier release', () => {
    assert.equal(parse([]).config.tracingSqlComment, 'auto');
    assert.equal(parse([]).config.tracingSqlCommentMinMs, 50);
    assert.equal(parse(['--tracing-sql-comment', 'always']).config.tracingSqlComment, 'always');
    assert.equal(parse(['--tracing-sql-comment', 'true']).config.tracingSqlComment, 'always');
    assert.equal(parse([], { SVC_GRAPHQL_TRACING_SQL_COMMENT: 'false' }).config.tracingSqlComment, 'never');
    assert.equal(parse(['--tracing-sql-comment=NEVER']).config.tracingSqlComment, 'never');
    assert.equal(parse([], { SVC_GRAPHQL_TRACING_SQL_COMMENT_MIN_MS: '20' }).config.tracingSqlCommentMinMs, 20);
    assert.throws(
      () => parse(['--tracing-sql-comment', 'sometimes']),
      (e: unknown) => e instanceof ConfigError && /expected one of auto, always, never/.test(e.message),
    );
  });

  test('flags win over environment variables', () => {
    const env = { SVC_GRAPHQL_SERVER_PORT: '9090', SVC_GRAPHQL_ADMIN_SECRET: 'from-env', SVC_GRAPHQL_LOG_LEVEL: 'debug' };
    const { config } = parse(['serve', '--server-port', '7070', '--admin-secret=from-flag'], env);
    assert.equal(config.port, 7070);
    assert.equal(config.adminSecret, 'from-flag');
    assert.equal(config.logLevel, 'debug', 'an option without a flag keeps its environment value');
  });

  test('a flag wins even when it equals the default', () => {
    const { config } = parse(['--server-port', '8080'], { SVC_GRAPHQL_SERVER_PORT: '9090' });
    assert.equal(config.port, 8080);
  });

  test('an empty environment variable counts as unset', () => {
    const { config } = parse([], { SVC_GRAPHQL_SERVER_PORT: '', SVC_GRAPHQL_ADMIN_SECRET: '' });
    assert.equal(config.port, 8080);
    assert.equal(config.adminSecret, undefined);
  });

  test('switches: bare, with a boolean value, and before another flag', () => {
    assert.equal(parse(['--stringify-numeric-types']).config.stringifyNumericTypes, true);
    assert.equal(parse(['--stringify-numeric-types', 'false']).config.stringifyNumericTypes, false);
    assert.equal(parse(['--stringify-numeric-types=false'], { SVC_GRAPHQL_STRINGIFY_NUMERIC_TYPES: 'true' }).config.stringifyNumericTypes, false);
    const { config } = parse(['--disable-cors', '--server-port', '1234']);
    assert.equal(config.disableCors, true);
    assert.equal(config.port, 1234);
  });

  test('pipeline lanes and their threshold: unset (the defaults), a flag or the environment, 0 turns lanes off', () => {
    assert.equal(parse([]).config.pgPipelineLanes, undefined);
    assert.equal(parse(['--pipeline-lanes', '0']).config.pgPipelineLanes, 0);
    assert.equal(parse([], { SVC_GRAPHQL_PG_PIPELINE_LANES: '3' }).config.pgPipelineLanes, 3);
    assert.equal(parse([]).config.pgPipelineFastMs, undefined);
    assert.equal(parse(['--pipeline-fast-ms', '5']).config.pgPipelineFastMs, 5);
    assert.equal(parse([], { SVC_GRAPHQL_PG_PIPELINE_FAST_MS: '3' }).config.pgPipelineFastMs, 3);
    assert.throws(() => parse(['--pipeline-fast-ms', '0.5']), /non-negative integer/);
    assert.throws(() => parse(['--pipeline-lanes', 'many']), /--pipeline-lanes: expected a non-negative integer/);
  });

  test('short flags', () => {
    const { config } = parse(['-c', '7', '-i', 'repeatable-read']);
    assert.equal(config.pgConnections, 7);
    assert.equal(config.txIsolation, 'repeatable-read');
  });

  const bad: Array<[string, string[], NodeJS.ProcessEnv, RegExp]> = [
    ['non-numeric port flag', ['--server-port', 'abc'], {}, /--server-port: expected a non-negative integer, got "abc"/],
    ['non-numeric port env', [], { SVC_GRAPHQL_SERVER_PORT: '80x' }, /SVC_GRAPHQL_SERVER_PORT: expected a non-negative integer/],
    ['port out of range', ['--server-port', '70000'], {}, /port must be between 0 \(any free port\) and 65535/],
    ['negative number', ['--connections', '-3'], {}, /--connections: expected a non-negative integer/],
    ['zero connections', ['--connections', '0'], {}, /must be at least 1/],
    ['bad boolean env', [], { SVC_GRAPHQL_ENABLE_ALLOWLIST: 'maybe' }, /SVC_GRAPHQL_ENABLE_ALLOWLIST: expected true or false, got "maybe"/],
    ['bad enum', ['--tx-iso', 'chaos'], {}, /--tx-iso: expected one of read-committed, repeatable-read, serializable/],
    ['bad log level', [], { SVC_GRAPHQL_LOG_LEVEL: 'loud' }, /SVC_GRAPHQL_LOG_LEVEL: expected one of/],
    ['unknown api', ['--enabled-apis', 'graphql,teleport'], {}, /unknown value "teleport"/],
    ['jwt secret not JSON', ['--jwt-secret', '{nope'], {}, /--jwt-secret: expected a JSON object/],
    ['jwt secret not an object', [], { SVC_GRAPHQL_JWT_SECRET: '[1,2]' }, /SVC_GRAPHQL_JWT_SECRET: expected a JSON object/],
    ['database url scheme', ['--database-url', 'mysql://x/y'], {}, /--database-url: expected postgres:\/\//],
    ['auth hook not a URL', ['--auth-hook', 'not a url'], {}, /--auth-hook: not a URL/],
    ['auth hook and jwt together', ['--auth-hook', 'http://h/', '--jwt-secret', '{"type":"HS256","key":"k"}'], {}, /cannot be used together/],
    ['unknown flag', ['--no-such-flag'], {}, /unknown flag --no-such-flag/],
    ['missing value', ['--admin-secret'], {}, /flag --admin-secret needs a value/],
    ['empty string value', ['--admin-secret='], {}, /--admin-secret: expected a non-empty value/],
  ];
  for (const [name, argv, env, msg] of bad) {
    test(`bad value → ConfigError: ${name}`, () => {
      assert.throws(
        () => parse(argv, env),
        (e: unknown) => {
          assert.ok(e instanceof ConfigError, `expected ConfigError, got ${String(e)}`);
          assert.match(e.message, msg);
          return true;
        },
      );
    });
  }

  test('--help lists every flag and its environment variable', () => {
    const h = helpText();
    for (const o of OPTIONS) {
      assert.ok(h.includes(`--${o.flag}`), `help misses --${o.flag}`);
      if (o.env) assert.ok(h.includes(o.env), `help misses ${o.env}`);
    }
  });
});

describe('svc process', () => {
  test('a bad flag exits 1 with a one-line message and no stack trace', { timeout: 60_000 }, async () => {
    const r = await runToExit(['--server-port', 'abc'], cleanEnv());
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.trim(), 'svc: --server-port: expected a non-negative integer, got "abc"');
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'stderr contains a stack trace');
  });

  test('a bad environment value exits 1 the same way', { timeout: 60_000 }, async () => {
    const r = await runToExit(['serve'], cleanEnv({ SVC_GRAPHQL_TX_ISOLATION: 'chaos' }));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^svc: SVC_GRAPHQL_TX_ISOLATION: expected one of/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  });

  test('--version and --help exit 0', { timeout: 60_000 }, async () => {
    const v = await runToExit(['--version']);
    assert.equal(v.code, 0);
    assert.match(v.stdout.trim(), /^v?\d+\.\d+/);
    const h = await runToExit(['--help']);
    assert.equal(h.code, 0);
    assert.match(h.stdout, /--server-port/);
  });
});

describe('scaling flags (issue 33)', () => {
  const pgUrl = 'postgres://u@db/x';
  test('--workers: auto by default, a number, or refused', async () => {
    const { resolveWorkers, poolPerWorker } = await import('../src/server/cluster.js');
    assert.equal(parse([]).config.workers, 'auto');
    assert.equal(resolveWorkers(parse([]).config), 1, 'embedded: one process');
    assert.ok(resolveWorkers(parse(['--database-url', pgUrl]).config) >= 1);
    assert.equal(parse(['--database-url', pgUrl, '--workers', '3']).config.workers, 3);
    assert.equal(parse([], { SVC_GRAPHQL_DATABASE_URL: pgUrl, SVC_GRAPHQL_WORKERS: 'AUTO' }).config.workers, 'auto');
    assert.throws(() => parse(['--database-url', pgUrl, '--workers', '0']), /--workers: expected a number of processes/);
    assert.throws(() => parse(['--database-url', pgUrl, '--workers', 'many']), /--workers: expected/);
    assert.throws(() => parse(['--workers', '2']), /the embedded database \(PGlite\) serves one process/);
    assert.equal(poolPerWorker(50, 4), 12);
    assert.equal(poolPerWorker(3, 4), 1);
  });

  test('explicit keys are reported (the pool default may be capped, an explicit one is not)', () => {
    assert.equal(parse([]).explicit.has('pgConnections'), false);
    assert.equal(parse(['-c', '20']).explicit.has('pgConnections'), true);
    assert.equal(parse([], { SVC_GRAPHQL_PG_CONNECTIONS: '20' }).explicit.has('pgConnections'), true);
  });

  test('read replicas and the LISTEN URL', () => {
    const { config } = parse(
      ['--database-url', pgUrl, '--read-replica-urls', 'postgres://r1/x, postgres://r2/x', '--read-from-primary-roles', 'auditor,admin'],
      { SVC_GRAPHQL_READ_REPLICA_MAX_LAG: '2' },
    );
    assert.deepEqual(config.readReplicaUrls, ['postgres://r1/x', 'postgres://r2/x']);
    assert.equal(config.readReplicaMaxLag, 2);
    assert.deepEqual(config.readFromPrimaryRoles, ['auditor', 'admin']);
    assert.equal(parse([]).config.readReplicaMaxLag, 5);
    assert.throws(() => parse(['--read-replica-urls', 'postgres://r1/x']), /needs --database-url/);
    assert.throws(() => parse(['--database-url', pgUrl, '--read-replica-urls', 'mysql://r1/x']), /expected postgres:\/\/ URLs/);
    assert.equal(parse(['--database-url', pgUrl, '--listen-database-url', 'postgres://direct/x']).config.listenDatabaseUrl, 'postgres://direct/x');
    assert.throws(() => parse(['--listen-database-url', 'http://x']), /--listen-database-url: expected postgres/);
  });
});
