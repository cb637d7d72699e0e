/**
 * Helper servers of the upstream harness that conformance cases name in `needs`, started by the
 * project's runs (conformance.test.ts, `npm run conformance:update`) on the fixed ports the cases
 * use:
 *
 * - `actions_webhook_server` (127.0.0.1:5593): upstream's ActionsWebhookHandler (tests-py
 *   context.py), the action handlers of the `actions` area. Like python's BaseHTTPRequestHandler
 *   it answers HTTP/1.0 with exactly `Content-Type` and `Set-Cookie` headers and closes the
 *   connection (the cases compare the response headers the engine reports in its debugging
 *   info). Handlers that write data call back the engine's /v1/graphql as admin.
 *
 * - `remote_graphql_server`: the upstream remote GraphQL servers (graphql-js) on 127.0.0.1:5000 and
 *   :4000 (test/fixtures/remote/upstream.ts), for the remote schema and relationship cases.
 *
 * A fixture whose port is taken is not started (its cases stay skipped).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { UPSTREAM_REMOTE_NEED, startUpstreamRemoteFixtures } from '../fixtures/remote/upstream.js';

export const ACTIONS_WEBHOOK_PORT = 5593;

export interface Fixtures {
  /** the `needs` the started fixtures satisfy */
  needs: string[];
  close(): Promise<void>;
}

const STATUS_TEXT: Record<number, string> = { 200: 'OK', 204: 'No Content', 400: 'Bad Request', 500: 'Internal Server Error' };
const EMAIL = /^\w+([.-]?\w+)*@\w+([.-]?\w+)*(\.\w{2,3})+$/;

type Json = Record<string, unknown>;

function send(sock: Socket, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  sock.end(`HTTP/1.0 ${status} ${STATUS_TEXT[status] ?? ''}\r\nContent-Type: application/json\r\nSet-Cookie: abcd\r\n\r\n${text}`);
}

async function graphql(engineUrl: string, adminSecret: string | null, query: string, variables: Json): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (adminSecret) headers['x-svc-admin-secret'] = adminSecret;
  const r = await fetch(`${engineUrl}/v1/graphql`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: r.status, body: (await r.json()) as Json };
}

const FAILED = [{ message: 'GraphQL query execution failed', code: 'unexpected' }, 400] as const;

async function route(path: string, req: Json, engineUrl: string, adminSecret: string | null): Promise<[unknown, number] | null> {
  const input = (req.input ?? {}) as Json;
  const invalidEmail = (message: string): [unknown, number] => [{ message, code: 'invalid-email' }, 400];
  const usersByEmail = async (single: boolean): Promise<[unknown, number]> => {
    const email = String(input.email);
    if (!EMAIL.test(email)) return invalidEmail('Given email address is not valid');
    const r = await graphql(engineUrl, adminSecret, 'query get_user($email:String!) { user(where:{email:{_eq:$email}},order_by: {id: asc}) { id } }', {
      email,
    });
    if (r.status !== 200 || !r.body.data) return [...FAILED];
    const users = (r.body.data as { user: unknown[] }).user;
    return [single ? users[0] : users, 200];
  };
  switch (path) {
    case '/create-user': {
      const email = String(input.email);
      if (!EMAIL.test(email)) return invalidEmail('Given email address is not valid');
      const r = await graphql(
        engineUrl,
        adminSecret,
        'mutation ($email: String! $name: String!) { insert_user_one(object: {email: $email, name: $name}){ id } }',
        { email, name: input.name },
      );
      if (r.status !== 200 || !r.body.data) return [...FAILED];
      return [(r.body.data as Json).insert_user_one, 200];
    }
    case '/create-users': {
      const users = input.users as Array<{ email: string }>;
      for (const u of users) if (!EMAIL.test(u.email)) return invalidEmail(`Email address is not valid: ${u.email}`);
      const r = await graphql(
        engineUrl,
        adminSecret,
        'mutation ($insert_inputs: [user_insert_input!]!){ insert_user(objects: $insert_inputs){ returning{ id } } }',
        { insert_inputs: users },
      );
      if (r.status !== 200 || !r.body.data) return [...FAILED];
      return [((r.body.data as Json).insert_user as Json).returning, 200];
    }
    case '/invalid-response':
    case '/scalar-response':
      return ['some-string', 200];
    case '/mirror-action':
      return [input.arg, 200];
    case '/get-user-by-email':
      return usersByEmail(true);
    case '/get-users-by-email':
      return usersByEmail(false);
    case '/intentional-error':
      return [input.blob, 400];
    case '/null-response':
      return [null, 200];
    default:
      return null;
  }
}

/** upstream's ActionsWebhookHandler on 127.0.0.1:5593 */
function actionsWebhook(engineUrl: string, adminSecret: string | null): Server {
  return createServer((sock) => {
    let buf = Buffer.alloc(0);
    sock.on('error', () => sock.destroy());
    sock.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1').split('\r\n');
      const length = Number(/^content-length:\s*(\d+)/im.exec(head.join('\n'))?.[1] ?? 0);
      if (buf.length < end + 4 + length) return;
      sock.removeAllListeners('data');
      const [method, path] = head[0]!.split(' ');
      if (method !== 'POST') {
        sock.end('HTTP/1.0 200 OK\r\n\r\n');
        return;
      }
      let req: Json;
      try {
        req = JSON.parse(buf.subarray(end + 4, end + 4 + length).toString('utf8')) as Json;
      } catch {
        send(sock, 400, { message: 'invalid json' });
        return;
      }
      route(path!, req, engineUrl, adminSecret).then(
        (r) => (r ? send(sock, r[1], r[0]) : sock.end('HTTP/1.0 204 No Content\r\n\r\n')),
        (e: unknown) => send(sock, 500, { message: String(e) }),
      );
    });
  });
}

function listen(server: Server, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
}

/** Starts the fixtures the engine at `engineUrl` needs for the conformance cases. */
export async function startFixtures(engineUrl: string, adminSecret: string | null = null): Promise<Fixtures> {
  const needs: string[] = [];
  const servers: Server[] = [];
  const actions = actionsWebhook(engineUrl, adminSecret);
  if (await listen(actions, ACTIONS_WEBHOOK_PORT)) {
    needs.push('actions_webhook_server');
    servers.push(actions);
  } else {
    process.stderr.write(`conformance: port ${ACTIONS_WEBHOOK_PORT} is taken; the cases needing actions_webhook_server stay skipped\n`);
  }
  const remotes = await startUpstreamRemoteFixtures();
  if (remotes) needs.push(UPSTREAM_REMOTE_NEED);
  else process.stderr.write('conformance: ports 5000/4000 are taken; the remote schema cases stay skipped\n');
  return {
    needs,
    close: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
      await remotes?.close();
    },
  };
}

/** Every `needs` that startFixtures can satisfy. */
export const FIXTURE_NEEDS = ['actions_webhook_server', UPSTREAM_REMOTE_NEED];
