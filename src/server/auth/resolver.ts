/**
 * Chooses the session resolver for the configuration: the Authenticator
 * (admin secret, auth webhook, JWT/JWK, unauthorized role).
 * Throws an Error on an invalid auth configuration (the server exits with it).
 */
import type { Config } from '../../config/config.js';
import type { Logger } from '../../execute/interface.js';
import { Authenticator, authOptionsFromConfig } from './authenticator.js';
import type { Session, RequestHeaders } from './session.js';
import type { OutboundClient } from '../../http/client.js';
import type { Span } from '../../core/tracing.js';

export interface SessionResolverImpl {
  /** `rawHeaders`: Node's `req.rawHeaders`, for the client's spelling of header names (auth webhook) */
  /** `span`: tracing on, the request's auth span (parent of the webhook call's) */
  resolve(headers: RequestHeaders, rawHeaders?: readonly string[], span?: Span): Promise<Session>;
  /** the session without a promise when no webhook/JWT is involved, else undefined */
  /** `fromNode`: the headers are a Node request's `headers` (see normalizeHeaders) */
  resolveNow?(headers: RequestHeaders, fromNode?: boolean): Session | undefined;
  describe(): Record<string, unknown>;
  /** resolves once ready (JWK set fetched); rejects when the first JWK fetch failed (fatal in Hasura) */
  ready?(): Promise<void>;
  close?(): void;
}

/** `outbound`: the engine's outbound client (the auth webhook's and the JWK set's calls) */
export function createSessionResolver(config: Config, log: Logger, outbound?: OutboundClient): SessionResolverImpl {
  const auth = new Authenticator({ ...authOptionsFromConfig(config), ...(outbound ? { outbound } : {}) }, log);
  return {
    resolve: (headers, rawHeaders, span) => auth.resolve(headers, rawHeaders, span),
    resolveNow: (headers, fromNode) => auth.resolveNow(headers, fromNode),
    describe: () => ({ ...auth.describe() }),
    ready: () => auth.ready(),
    close: () => auth.close(),
  };
}
