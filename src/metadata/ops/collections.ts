/**
 * Query collections and the allow-list: create/drop_query_collection,
 * add/drop_query_to/from_collection, add/drop_collection_to/from_allowlist.
 */
import { parse } from 'graphql';
import { SvcError, notExists } from '../../errors.js';
import { ArgReader, expectArray, expectBool, reader } from '../../document/args.js';
import { SUCCESS, defineOp, type OpContext } from '../registry.js';
import type { Metadata, QueryCollection } from '../../model/metadata.js';
import { dependentObjects } from '../../document/messages.js';
import { parseAllowlistScope } from '../../document/apiLimits.js';

function checkQuery(text: string, path: string): void {
  try {
    parse(text);
  } catch (e) {
    throw new SvcError(400, 'parse-failed', `not a valid graphql query: ${(e as Error).message}`, path);
  }
}

function parseQueries(v: unknown, path: string): QueryCollection['definition']['queries'] {
  const d = new ArgReader(v, path);
  const list = expectArray(d.required('queries'), d.sub('queries'));
  d.done();
  const seen = new Set<string>();
  return list.map((q, i) => {
    const a = new ArgReader(q, `${d.sub('queries')}[${i}]`);
    const name = a.name('name');
    const query = a.string('query');
    a.done();
    checkQuery(query, a.sub('query'));
    if (seen.has(name)) throw new SvcError(400, 'already-exists', `query with name ${JSON.stringify(name)} already exists`, a.path);
    seen.add(name);
    return { name, query };
  });
}

/**
 * REST endpoints over a collection (or one query of it): a drop that would leave them without their
 * query fails with dependency-error, or (cascade) drops them too.
 */
function dependentEndpoints(ctx: OpContext, collection: string, query: string | undefined, cascade: boolean): void {
  const md = ctx.state.metadata;
  const uses = (e: Metadata['rest_endpoints'][number]) =>
    e.definition.query.collection_name === collection && (query === undefined || e.definition.query.query_name === query);
  const deps = md.rest_endpoints.filter(uses);
  if (!deps.length) return;
  if (!cascade) throw dependentObjects(deps.map((e) => `rest endpoint ${e.name}`).sort(), ctx.path);
  md.rest_endpoints = md.rest_endpoints.filter((e) => !uses(e));
}

function findCollection(ctx: OpContext, name: string): QueryCollection {
  const c = ctx.state.metadata.query_collections.find((x) => x.name === name);
  if (!c) throw notExists(`query collection with name ${JSON.stringify(name)} does not exists`, ctx.path);
  return c;
}

defineOp('create_query_collection', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const name = a.name('name');
    const queries = parseQueries(a.required('definition'), a.sub('definition'));
    const comment = a.string('comment', true);
    a.done();
    if (ctx.state.metadata.query_collections.some((c) => c.name === name)) {
      throw new SvcError(400, 'already-exists', `query collection with name ${JSON.stringify(name)} already exists`, ctx.path);
    }
    ctx.state.metadata.query_collections.push({ name, definition: { queries }, ...(comment !== undefined ? { comment } : {}) });
    return SUCCESS;
  },
});

defineOp('drop_query_collection', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const name = a.name('collection');
    expectBool(a.required('cascade'), a.sub('cascade'));
    const cascade = a.bool('cascade', false);
    a.done();
    findCollection(ctx, name);
    const md = ctx.state.metadata;
    dependentEndpoints(ctx, name, undefined, cascade);
    if (md.allowlist.some((x) => x.collection === name)) {
      if (!cascade) {
        throw new SvcError(
          400,
          'dependency-error',
          `query collection ${JSON.stringify(name)} is being used in the allowlist; use cascade: true to remove it from the allowlist too`,
          ctx.path,
        );
      }
      md.allowlist = md.allowlist.filter((x) => x.collection !== name);
    }
    md.query_collections = md.query_collections.filter((c) => c.name !== name);
    return SUCCESS;
  },
});

defineOp('add_query_to_collection', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const collection = a.name('collection_name');
    const name = a.name('query_name');
    const query = a.string('query');
    a.done();
    checkQuery(query, a.sub('query'));
    const c = findCollection(ctx, collection);
    if (c.definition.queries.some((q) => q.name === name)) {
      throw new SvcError(400, 'already-exists', `query with name ${JSON.stringify(name)} already exists in collection ${JSON.stringify(collection)}`, ctx.path);
    }
    c.definition.queries.push({ name, query });
    return SUCCESS;
  },
});

defineOp('drop_query_from_collection', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const collection = a.name('collection_name');
    const name = a.name('query_name');
    a.done();
    const c = findCollection(ctx, collection);
    if (!c.definition.queries.some((q) => q.name === name)) {
      throw notExists(`query with name ${JSON.stringify(name)} not found in collection ${JSON.stringify(collection)}`, ctx.path);
    }
    dependentEndpoints(ctx, collection, name, false);
    c.definition.queries = c.definition.queries.filter((q) => q.name !== name);
    return SUCCESS;
  },
});

defineOp('add_collection_to_allowlist', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const collection = a.name('collection');
    const rawScope = a.raw('scope');
    const scope = rawScope === undefined || rawScope === null ? undefined : parseAllowlistScope(rawScope, a.sub('scope'));
    a.done();
    findCollection(ctx, collection);
    const md = ctx.state.metadata;
    if (md.allowlist.some((x) => x.collection === collection)) {
      // v1.3: adding again is a no-op; v2 (with a scope): the same, and it says how to change the scope
      if (scope === undefined) return SUCCESS;
      return {
        message: `collection ${JSON.stringify(collection)} already exists in the allowlist, scope ignored; to change scope, use update_scope_of_collection_in_allowlist`,
      };
    }
    md.allowlist.push(scope === undefined ? { collection } : { collection, scope });
    return SUCCESS;
  },
});

/** v2: the scope of a collection already in the allow-list (global, or the roles that may run its queries). */
defineOp('update_scope_of_collection_in_allowlist', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const collection = a.name('collection');
    const scope = parseAllowlistScope(a.required('scope'), a.sub('scope'));
    a.done();
    const entry = ctx.state.metadata.allowlist.find((x) => x.collection === collection);
    if (!entry) throw new SvcError(400, 'not-found', `collection ${JSON.stringify(collection)} doesn't exist in the allowlist`, ctx.path);
    entry.scope = scope;
    return SUCCESS;
  },
});

defineOp('drop_collection_from_allowlist', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const collection = a.name('collection');
    a.done();
    const md = ctx.state.metadata;
    if (!md.allowlist.some((x) => x.collection === collection)) {
      throw notExists(`collection ${JSON.stringify(collection)} doesn't exist in the allowlist`, ctx.path);
    }
    md.allowlist = md.allowlist.filter((x) => x.collection !== collection);
    return SUCCESS;
  },
});
