/** The first words of `svc` that are CLI commands (src/main.ts hands them to ./index.ts; the rest is `serve`). */
export const CLI_COMMANDS: readonly string[] = ['init', 'console', 'metadata', 'md', 'migrate', 'seed', 'seeds', 'sd'];

/** `svc --help`'s list of commands. */
export function cliOverview(): string {
  return [
    'Usage: svc <command> [flags]      (`svc <command> --help` for each)',
    '',
    'Commands:',
    '  serve            run the GraphQL engine (the default command; its flags are below)',
    '  init             create a project directory: config.yaml, migrations/, metadata/, seeds/',
    '  console          serve the console for the project; changes made in it become migrations and metadata files',
    '  metadata, md     export | apply | diff | clear | reload | inconsistency list|status|drop',
    '  migrate          create | apply | status | squash',
    '  seed             create | apply',
    '  version          print the version',
    '  help             this text',
  ].join('\n');
}
