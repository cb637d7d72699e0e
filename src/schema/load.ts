/**
 * Loads what the pure builder needs from the database (introspection, rows
 * of enum tables), builds the SchemaCache and lets the schema extensions
 * (src/schema/extensions.ts; the engine's list: src/extensions.ts) attach.
 */
import { introspect } from '../catalog/introspect.js';
import type { DbIntrospection } from '../model/introspection.js';
import type { Queryable } from '../db/db.js';
import { qualifiedKey, type Metadata } from '../model/metadata.js';
import { buildSchemaCache, type EnumRows } from './build.js';
import type { SchemaCache } from './model.js';
import { quoteIdent } from '../sql/ident.js';
import type { SchemaExtension } from './extensions.js';

/** `roleCacheMaxBytes`: the budget of the cache's per-role schemas (the engine's --role-schema-cache-max-bytes) */
export async function loadSchemaCache(
  q: Queryable,
  md: Metadata,
  resourceVersion: number,
  db: DbIntrospection | undefined,
  extensions: readonly SchemaExtension[],
  roleCacheMaxBytes?: number,
): Promise<SchemaCache> {
  const intro = db ?? (await introspect(q));
  const enumRows: EnumRows = new Map();
  for (const t of md.tables) {
    if (!t.is_enum) continue;
    const info = intro.tables.get(qualifiedKey(t.table));
    if (!info || !info.primaryKey || info.primaryKey.columns.length !== 1) continue;
    const pk = info.primaryKey.columns[0]!;
    const comment = info.columns.find((c) => c.name !== pk);
    try {
      const r = await q.query(
        `select ${quoteIdent(pk)}::text as value, ${comment ? `${quoteIdent(comment.name)}::text` : 'null'} as comment from ${quoteIdent(t.table.schema)}.${quoteIdent(t.table.name)} order by 1`,
      );
      enumRows.set(
        qualifiedKey(t.table),
        r.rows.map((x) => ({ value: x.value, comment: x.comment })),
      );
    } catch {
      /* the builder reports the table as inconsistent */
    }
  }
  const cache = buildSchemaCache(md, intro, resourceVersion, enumRows, roleCacheMaxBytes);
  cache.extensions = extensions;
  for (const x of extensions) await x.attach?.(cache, md, q);
  return cache;
}
