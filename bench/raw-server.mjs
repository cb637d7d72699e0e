// Raw baseline target: the practical upper bound for a GraphQL-over-PostgreSQL server.
// A minimal Node `http` server on `pg`: POST /q/<scenario> with {"variables": {...}} runs
// that scenario's hand-written single SQL statement (bench/queries/<id>.sql) as a named
// prepared statement with the variables (and session headers) bound as parameters, and
// answers {"data":<json text built by PostgreSQL>} without parsing it in JavaScript.
//
// usage: node raw-server.mjs --database-url URL --port P [--pool 16]
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { SCENARIOS, loadQueries } from './scenarios.mjs';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    port: { type: 'string' },
    pool: { type: 'string', default: '16' },
  },
});
if (!values['database-url'] || !values.port) {
  process.stderr.write('usage: raw-server.mjs --database-url URL --port P [--pool N]\n');
  process.exit(2);
}

// json/jsonb come back as the text PostgreSQL built: never JSON.parse'd here.
const JSON_OIDS = new Set([114, 3802]);
const types = {
  getTypeParser: (oid, format) => (JSON_OIDS.has(oid) ? (v) => v : pg.types.getTypeParser(oid, format)),
};
const pool = new pg.Pool({
  connectionString: values['database-url'],
  max: Number(values.pool),
  types,
  statement_timeout: 30_000,
  connectionTimeoutMillis: 10_000,
});
pool.on('error', () => {}); // an idle client dying must not kill the server

const routes = new Map(
  SCENARIOS.map((s) => [
    `/q/${s.id}`,
    { name: `bench_${s.id}`, text: loadQueries(s).sql, params: s.params },
  ]),
);

const server = createServer((req, res) => {
  const route = req.method === 'POST' ? routes.get(req.url) : undefined;
  if (!route) {
    res.writeHead(req.url === '/healthz' ? 200 : 404, { 'content-type': 'text/plain' });
    res.end(req.url === '/healthz' ? 'OK' : 'not found');
    return;
  }
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size > 100_000) req.destroy();
    else chunks.push(c);
  });
  req.on('end', () => {
    let values;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      values = route.params(body.variables ?? {}, req.headers);
    } catch (e) {
      send(res, 400, JSON.stringify({ errors: [{ message: `bad request: ${e.message}` }] }));
      return;
    }
    pool.query({ name: route.name, text: route.text, values }).then(
      (r) => send(res, 200, `{"data":${r.rows[0].data}}`),
      (e) => send(res, 500, JSON.stringify({ errors: [{ message: e.message }] })),
    );
  });
});

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

server.keepAliveTimeout = 65_000;
server.on('error', (e) => {
  process.stderr.write(`raw-server: ${e.message}\n`);
  process.exit(1);
});
server.listen(Number(values.port), '127.0.0.1', () => {
  process.stdout.write(`raw listening on http://127.0.0.1:${values.port} (node ${process.version})\n`);
});

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(0), 3000).unref();
  server.close();
  server.closeAllConnections?.();
  await pool.end().catch(() => {});
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
