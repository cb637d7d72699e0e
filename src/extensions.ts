/**
 * The schema extensions of the engine, the one list (src/schema/extensions.ts): remote schemas
 * (root fields, remote relationships, their introspection), then actions (root fields). The engine
 * builds every schema cache with it (src/schema/load.ts).
 */
import { actionsExtension } from './actions/schema.js';
import { remoteExtension } from './remote/fields.js';
import type { SchemaExtension } from './schema/extensions.js';

export const SCHEMA_EXTENSIONS: readonly SchemaExtension[] = [remoteExtension, actionsExtension];
