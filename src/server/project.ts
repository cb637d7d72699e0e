/**
 * `svc serve --project-dir D` (SVC_GRAPHQL_PROJECT_DIR): the console served by this server
 * records into the project directory D (config.yaml, migrations/, metadata/) as it does under
 * `svc console` — the same API, in this process:
 *   GET  /apis/project   the project (admin only)
 *   POST /apis/migrate   a change made in the console: run it, write its migration and the
 *                        metadata files (src/cli/consoleApi.ts; admin only)
 * The project is read at start-up: a directory without config.yaml stops the start.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/config.js';
import type { Engine } from '../engine.js';
import { SvcError } from '../errors.js';
import { ProjectRecorder } from '../cli/consoleApi.js';
import { loadProject, locateProject } from '../cli/project.js';
import { InProcessClient } from '../cli/startup.js';
import { isAdmin, type Session } from './auth/session.js';
import { consoleEnabled } from './console.js';
import { withDoubles } from '../json.js';

export function registerProjectApi(
  app: FastifyInstance,
  engine: Engine,
  config: Config,
  resolve: (req: FastifyRequest, reply?: FastifyReply) => Promise<Session>,
  sendError: (reply: FastifyReply, e: unknown) => void,
): void {
  if (config.projectDir === undefined || !consoleEnabled(config)) return;
  const project = loadProject(locateProject(config.projectDir, process.cwd(), true), process.env);
  const recorder = new ProjectRecorder(project);
  const client = new InProcessClient(engine);
  const admin = async (req: FastifyRequest, reply: FastifyReply) => {
    const session = await resolve(req, reply);
    if (!isAdmin(session)) throw new SvcError(400, 'access-denied', 'restricted access : admin only');
  };
  app.get('/apis/project', async (req, reply) => {
    try {
      await admin(req, reply);
      reply.code(200).send(recorder.describe());
    } catch (e) {
      sendError(reply, e);
    }
    return reply;
  });
  app.post('/apis/migrate', async (req, reply) => {
    try {
      if ((req.body as { __invalidJson?: boolean })?.__invalidJson) throw new SvcError(400, 'invalid-json', 'invalid json');
      await admin(req, reply);
      // numbers as doubles: the recorder writes metadata and migration files, which read them so
      const a = await recorder.handle(client, withDoubles(req.body));
      reply.code(a.status).type('application/json').send(JSON.stringify(a.body));
    } catch (e) {
      sendError(reply, e);
    }
    return reply;
  });
}
