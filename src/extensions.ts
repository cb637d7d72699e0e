/**
 * The schema extensions of an engine, the one list (src/schema/extensions.ts): remote schemas
 * (root fields, remote relationships, their introspection from the engine's store), then actions
 * (root fields). The engine builds every schema cache with it (src/schema/load.ts). And their
 * executors: how a plan with their root fields runs (`EXTENSION_EXECUTORS`, given to every request's
 * ExecContext).
 */
import { actionsExtension } from './actions/schema.js';
import { remoteExtension } from './remote/fields.js';
import type { SchemaExtension } from './schema/extensions.js';
import type { RemoteStore } from './remote/introspect.js';
import { actionsExecutor } from './actions/execute.js';
import { remoteActionsExecutor, remoteExecutor } from './remote/executor.js';
import type { ExtensionExecutors } from './execute/interface.js';

export function schemaExtensions(remotes: RemoteStore): readonly SchemaExtension[] {
  return [remoteExtension(remotes), actionsExtension];
}

/** The executors of the plans the extensions answer (execute/graphql.ts runs the others). */
export const EXTENSION_EXECUTORS: ExtensionExecutors = Object.freeze({
  actions: actionsExecutor,
  remote: remoteExecutor,
  'remote-actions': remoteActionsExecutor,
});
