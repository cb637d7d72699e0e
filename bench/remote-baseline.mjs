// The baseline of bench/remote.mjs, by hand: one SQL statement (the 100 rows as JSON) + one HTTP
// request to the remote with one alias per distinct join value, merged in Node.
//   node bench/remote-baseline.mjs PORT REMOTE_URL DATABASE_URL
import { Agent, createServer, request as httpRequest } from 'node:http';
import pg from 'pg';

const [port, remoteUrl, dbUrl] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: dbUrl, max: 16 });
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
const remote = new URL(remoteUrl);
const post = (body) =>
  new Promise((resolve, reject) => {
    const req = httpRequest(remote, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
const sql = `select coalesce(json_agg(json_build_object('id', t.id, 'msg_id', t.msg_id) order by t.id), '[]')::text as j
             from (select id, msg_id from items order by id limit 100) t`;
createServer((req, res) => {
  req.resume();
  req.on('end', async () => {
    try {
      const rows = JSON.parse((await pool.query(sql)).rows[0].j);
      const ids = [...new Set(rows.map((r) => r.msg_id))];
      const doc = `query { ${ids.map((id) => `m${id}: message(id: ${id}) { id msg }`).join(' ')} }`;
      const data = (await post(JSON.stringify({ query: doc }))).data;
      const items = rows.map((r) => ({ id: r.id, message: data[`m${r.msg_id}`] ?? null }));
      const body = JSON.stringify({ data: { items } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    } catch (e) {
      res.writeHead(500);
      res.end(String(e));
    }
  });
}).listen(Number(port), '127.0.0.1');
