/**
 * The schema extensions of an engine, the one list (src/schema/extensions.ts): remote schemas
 * (root fields, remote relationships, their introspection from the engine's store), then actions
 * (root fields). The engine builds every schema cache with it (src/schema/load.ts).
 */
import { actionsExtension } from './actions/schema.js';
import { remoteExtension } from './remote/fields.js';
import type { SchemaExtension } from './schema/extensions.js';
import type { RemoteStore } from './remote/introspect.js';

export function schemaExtensions(remotes: RemoteStore): readonly SchemaExtension[] {
  return [remoteExtension(remotes), actionsExtension];
}
