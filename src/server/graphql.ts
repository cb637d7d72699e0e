/** Wires the GraphQL executor (and the allow-list) into the HTTP and websocket routes. */
import { checkAllowlist } from '../execute/allowlist.js';
import { explainGraphQL, runGraphQL, type ExplainBody } from '../execute/graphql.js';
import type { ExecContext } from '../execute/interface.js';
import { planLiveQuery } from '../execute/subscription.js';
import type { Engine } from '../engine.js';
import type { GraphQLHandlers } from './app.js';
import { isAdmin, type Session } from './auth/session.js';
import type { CancelToken } from '../core/cancel.js';

const context = (engine: Engine, session: Session, headers: ExecContext['headers'], signal?: CancelToken): ExecContext => ({
  cache: engine.cache,
  db: engine.db,
  readDb: engine.readDb(session.role, headers),
  config: engine.config,
  session,
  log: engine.log,
  headers,
  signal,
});

export const graphqlHandlers: GraphQLHandlers = {
  run(engine, session, req, headers, opts) {
    if (engine.config.enableAllowlist && !isAdmin(session)) checkAllowlist(engine.cache, req.query, session.role);
    return runGraphQL(context(engine, session, headers, opts.signal), req, opts);
  },
  planLive(engine, session, req, headers, opts) {
    return planLiveQuery(context(engine, session, headers), req, { relay: opts?.relay });
  },
  explain(engine, session, body, headers) {
    return explainGraphQL(context(engine, session, headers), body as ExplainBody);
  },
};
