/**
 * create_rest_endpoint / drop_rest_endpoint (Hasura v2's RESTified endpoints; RQL/DDL/Endpoint.hs and
 * RQL/Types/Endpoint.hs). The endpoint's template and query are checked by the schema build
 * (src/rest/endpoints.ts): a change that leaves it inconsistent (a missing collection or query, an
 * ambiguous or malformed template) is refused like every other metadata change.
 */
import { SvcError } from '../../errors.js';
import { ArgReader, expectArray, expectText, parseFailed, reader } from '../../document/args.js';
import { SUCCESS, defineOp } from '../registry.js';
import { checkStorable } from '../storable.js';
import type { RestEndpointMetadata } from '../../model/metadata.js';
import { REST_METHODS } from '../../rest/endpoints.js';

/** bounds of a template: a URL is at most this long and has at most this many segments */
const MAX_URL_CHARS = 2048;
const MAX_SEGMENTS = 64;

/** An endpoint's definition (create_rest_endpoint's args, or an entry of replace_metadata's rest_endpoints). */
export function parseRestEndpoint(a: ArgReader): RestEndpointMetadata {
  const name = a.name('name');
  const url = a.name('url');
  if (url.length > MAX_URL_CHARS) throw parseFailed(`the URL template is longer than ${MAX_URL_CHARS} characters`, a.sub('url'));
  if (url.split('/').length > MAX_SEGMENTS) throw parseFailed(`the URL template has more than ${MAX_SEGMENTS} segments`, a.sub('url'));
  const list = expectArray(a.required('methods'), a.sub('methods'));
  // upstream's EndpointMethods: a non-empty, case-sensitive list of GET, POST, PUT, DELETE, PATCH
  if (list.length === 0) throw parseFailed('parsing NonEmpty failed, unexpected empty list', a.sub('methods'));
  const methods = list.map((m, i) => {
    const path = `${a.sub('methods')}[${i}]`;
    if (typeof m !== 'string') throw parseFailed('Only standard HTTP methods supported', path);
    if (!(REST_METHODS as readonly string[]).includes(m)) throw parseFailed(`Method ${expectText(m, path)} not supported.`, path);
    return m;
  });
  const d = new ArgReader(a.required('definition'), a.sub('definition'), 'EndpointDef');
  const q = new ArgReader(d.required('query'), d.sub('query'), 'QueryReference');
  const collection_name = q.name('collection_name');
  const query_name = q.name('query_name');
  q.done();
  d.done();
  const comment = a.string('comment', true);
  a.done();
  const out: RestEndpointMetadata = { name, url, methods: [...new Set(methods)], definition: { query: { collection_name, query_name } } };
  if (comment !== undefined) out.comment = comment;
  checkStorable(out, a.path);
  return out;
}

defineOp('create_rest_endpoint', {
  kind: 'metadata',
  async run(ctx, args) {
    const e = parseRestEndpoint(reader(args, 'CreateEndpoint'));
    const md = ctx.state.metadata;
    if (md.rest_endpoints.some((x) => x.name === e.name)) {
      throw new SvcError(400, 'already-exists', `Endpoint with name: ${e.name} already exists`, ctx.path);
    }
    md.rest_endpoints.push(e);
    return SUCCESS;
  },
});

defineOp('drop_rest_endpoint', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args, 'DropEndpoint');
    const name = a.name('name');
    a.done();
    const md = ctx.state.metadata;
    if (!md.rest_endpoints.some((x) => x.name === name)) {
      throw new SvcError(400, 'not-exists', `endpoint with name: ${name} does not exist`, ctx.path);
    }
    md.rest_endpoints = md.rest_endpoints.filter((x) => x.name !== name);
    return SUCCESS;
  },
});
