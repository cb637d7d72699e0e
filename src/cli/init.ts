/** `svc init [directory]` (reference: cli/svc_init.rst): a config v2 project. */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { CommandSpec } from './context.js';
import { EXIT } from './errors.js';
import { dirNotEmpty, projectExists } from './messages.js';
import { writeMetadataDir } from './metadata.js';
import { CONFIG_FILE, DEFAULT_ENDPOINT } from './project.js';
import { toYaml } from './yamlio.js';

const init: CommandSpec = {
  path: ['init'],
  summary: 'Initialize a directory for Svc migrations and metadata',
  usage: 'svc init [directory-name] [flags]',
  description: [
    'Creates <directory>/config.yaml (config version 2), migrations/, metadata/ (the files of an empty',
    'metadata) and seeds/. The directory must not exist or be empty; "." initializes the current directory.',
  ].join('\n'),
  examples: [
    '# Create a directory to store migrations and metadata (default name: svc)',
    'svc init my-project',
    '',
    '# Now, edit my-project/config.yaml to add endpoint and admin secret, or:',
    '# Create a directory with endpoint and admin secret configured:',
    'svc init my-project --endpoint https://my-graphql-engine.com --admin-secret adminsecretkey',
    '',
    '# Create a svc project in the current working directory',
    'svc init .',
  ],
  flags: [
    { name: 'endpoint', type: 'string', value: 'string', description: 'http(s) endpoint of Svc, written to config.yaml' },
    {
      name: 'admin-secret',
      type: 'string',
      value: 'string',
      description: 'admin secret of Svc, written to config.yaml (or leave it to SVC_GRAPHQL_ADMIN_SECRET)',
    },
    { name: 'version', type: 'string', value: 'int', description: 'config version to be used (only 2)' },
  ],
  args: { min: 0, max: 1 },
  server: false,
  exits: [EXIT.PROJECT],
  async run(ctx) {
    const v = ctx.flag('version');
    if (v !== undefined && v !== '2') throw ctx.usage(`--version: only config version 2 is supported, got ${JSON.stringify(v)}`);
    const name = ctx.args[0] ?? 'svc';
    const dir = ctx.path(name);
    if (existsSync(join(dir, CONFIG_FILE))) throw projectExists(dir);
    if (existsSync(dir) && name !== '.' && readdirSync(dir).length) throw dirNotEmpty(dir);
    mkdirSync(dir, { recursive: true });
    const config: Record<string, unknown> = { version: 2, endpoint: ctx.flag('endpoint') ?? DEFAULT_ENDPOINT };
    const secret = ctx.flag('admin-secret');
    if (secret !== undefined) config.admin_secret = secret;
    config.metadata_directory = 'metadata';
    config.migrations_directory = 'migrations';
    config.seeds_directory = 'seeds';
    config.actions = { kind: 'synchronous', handler_webhook_baseurl: 'http://localhost:3000' };
    writeFileSync(join(dir, CONFIG_FILE), toYaml(config));
    for (const d of ['migrations', 'seeds']) {
      mkdirSync(join(dir, d), { recursive: true });
      writeFileSync(join(dir, d, '.gitkeep'), '');
    }
    const files = writeMetadataDir(join(dir, 'metadata'), { version: 2 });
    const rel = relative(ctx.cwd, dir) || '.';
    ctx.out.line(`created the project ${rel}: config.yaml, migrations/, metadata/, seeds/`);
    if (rel !== '.') ctx.out.line(`next: cd ${rel}, check config.yaml (endpoint, admin_secret), then svc metadata export`);
    ctx.out.result({ directory: dir, files: [join(dir, CONFIG_FILE), ...files] });
    return EXIT.OK;
  },
};

export const INIT_COMMANDS: CommandSpec[] = [init];
