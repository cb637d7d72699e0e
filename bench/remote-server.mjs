// The remote GraphQL server of bench/remote.mjs: graphql-js over node:http, `message(id)`.
//   node bench/remote-server.mjs PORT
import { createServer } from 'node:http';
import { buildSchema, graphql } from 'graphql';

const schema = buildSchema('type Message { id: Int!  msg: String! }  type Query { message(id: Int!): Message }');
const rootValue = { message: ({ id }) => ({ id, msg: `message ${id}` }) };

createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    let body = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      /* answered as a GraphQL error below */
    }
    const result = await graphql({ schema, source: String(body.query ?? ''), rootValue, variableValues: body.variables ?? undefined });
    const text = JSON.stringify(result);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
}).listen(Number(process.argv[2] ?? 0), '127.0.0.1');
