// Scenario definitions shared by the runner (bench/run.mjs) and the raw baseline server
// (bench/raw-server.mjs). Each scenario has, in bench/queries/:
//   <id>.hasura.graphql       the request Svc answers (Hasura v1.3 schema)
//   <id>.postgraphile.graphql the equivalent request in PostGraphile v5 (Amber) naming
//   <id>.sql                  the hand-written single SQL statement = raw baseline
// Variables are fixed, so every target answers exactly the same request each time.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const HERE = dirname(fileURLToPath(import.meta.url));
const q = (file) => readFileSync(join(HERE, 'queries', file), 'utf8');

/** Session headers of the permission scenario, sent to every target. */
export const USER_HEADERS = { 'x-svc-role': 'user', 'x-svc-user-id': '42' };

const BEFORE = '2022-06-01T00:00:00Z';

// g_insert writes rows no read scenario can see, and the runner deletes them afterwards.
export const INSERT_MARK = { authorId: 9999, ownerId: 999, createdAt: '2030-01-01T00:00:00Z' };
const insertRow = {
  author_id: INSERT_MARK.authorId,
  owner_id: INSERT_MARK.ownerId,
  title: 'Benchmarking inserts #bench',
  body: 'Inserted by the benchmark; deleted after the run.',
  rating: 3,
  published: false,
  created_at: INSERT_MARK.createdAt,
};

const byCreatedDesc = (rows) =>
  rows.every((r, i) => i === 0 || Date.parse(rows[i - 1].created_at) >= Date.parse(r.created_at));

/**
 * @typedef {object} Scenario
 * @property {string} id
 * @property {string} what
 * @property {Record<string,unknown>} variables  Hasura variables (also the raw server's input)
 * @property {Record<string,unknown>} pgVariables PostGraphile variables
 * @property {Record<string,string>} headers
 * @property {(vars: any, headers: Record<string,string|undefined>) => unknown[]} params raw SQL params
 * @property {(data: any) => string|null} check  Hasura-shaped data → null if OK, else why not
 * @property {(data: any) => any} fromPostgraphile PostGraphile data → Hasura-shaped data
 * @property {boolean} [mutation] data differs per request (ids): compare shape, not values
 */

/** @type {Scenario[]} */
export const SCENARIOS = [
  {
    id: 'a_pk',
    what: 'lookup by primary key',
    variables: { id: 4242 },
    pgVariables: { id: 4242 },
    headers: {},
    params: (v) => [v.id],
    check: (d) => (d?.articles_by_pk?.id === 4242 && typeof d.articles_by_pk.body === 'string' ? null : 'expected article 4242'),
    fromPostgraphile: (d) => ({ articles_by_pk: d.articleByRowId && renameArticle(d.articleByRowId) }),
  },
  {
    id: 'b_list',
    what: 'filter + order + limit 20',
    variables: { before: BEFORE },
    pgVariables: { before: BEFORE },
    headers: {},
    params: (v) => [v.before],
    check: (d) =>
      d?.articles?.length === 20 && byCreatedDesc(d.articles) && d.articles.every((r) => Date.parse(r.created_at) < Date.parse(BEFORE))
        ? null
        : 'expected 20 articles before the date, newest first',
    fromPostgraphile: (d) => ({ articles: d.allArticles.nodes.map(renameArticle) }),
  },
  {
    id: 'c_nested',
    what: 'author → 10 articles → 5 comments',
    variables: { id: 1234 },
    pgVariables: { id: 1234 },
    headers: {},
    params: (v) => [v.id],
    check: (d) => {
      const a = d?.authors_by_pk;
      if (a?.id !== 1234) return 'expected author 1234';
      if (a.articles?.length !== 10 || !byCreatedDesc(a.articles)) return 'expected 10 articles, newest first';
      if (!a.articles.every((x) => x.comments?.length === 5 && byCreatedDesc(x.comments))) return 'expected 5 comments per article';
      return null;
    },
    fromPostgraphile: (d) => {
      const a = d.authorByRowId;
      return {
        authors_by_pk: a && {
          id: a.rowId,
          name: a.name,
          articles: a.articlesByAuthorId.nodes.map((x) => ({
            id: x.rowId,
            title: x.title,
            created_at: x.createdAt,
            comments: x.commentsByArticleId.nodes.map((c) => ({ id: c.rowId, body: c.body, likes: c.likes, created_at: c.createdAt })),
          })),
        },
      };
    },
  },
  {
    id: 'd_count',
    what: 'filtered aggregate count',
    variables: { authorId: 77 },
    pgVariables: { authorId: 77 },
    headers: {},
    params: (v) => [v.authorId],
    check: (d) => {
      const n = d?.comments_aggregate?.aggregate?.count;
      return Number.isInteger(n) && n > 0 ? null : 'expected a positive integer count';
    },
    fromPostgraphile: (d) => ({ comments_aggregate: { aggregate: { count: d.allComments.totalCount } } }),
  },
  {
    id: 'e_perm',
    what: 'b_list as role user (row filter)',
    variables: { before: BEFORE },
    pgVariables: { before: BEFORE },
    headers: USER_HEADERS,
    params: (v, h) => [v.before, h['x-svc-user-id']],
    check: (d) =>
      d?.articles?.length === 20 && byCreatedDesc(d.articles) ? null : 'expected 20 articles of owner 42, newest first',
    fromPostgraphile: (d) => ({ articles: d.allArticles.nodes.map(renameArticle) }),
  },
  {
    id: 'f_large',
    what: '1,000 rows + object relationship',
    variables: { after: 50000 },
    pgVariables: { after: 50000 },
    headers: {},
    params: (v) => [v.after],
    check: (d) =>
      d?.articles?.length === 1000 &&
      d.articles[0].id === 50001 &&
      d.articles.every((r, i) => r.id === 50001 + i && r.author && typeof r.author.name === 'string')
        ? null
        : 'expected articles 50001..51000, each with its author',
    fromPostgraphile: (d) => ({
      articles: d.allArticles.nodes.map((x) => ({
        id: x.rowId,
        title: x.title,
        rating: x.rating,
        created_at: x.createdAt,
        author: x.authorByAuthorId && { id: x.authorByAuthorId.rowId, name: x.authorByAuthorId.name, email: x.authorByAuthorId.email },
      })),
    }),
  },
  {
    id: 'g_insert',
    what: 'insert 1 article, returning id title',
    mutation: true,
    variables: { object: insertRow },
    pgVariables: {
      article: {
        authorId: insertRow.author_id,
        ownerId: insertRow.owner_id,
        title: insertRow.title,
        body: insertRow.body,
        rating: insertRow.rating,
        published: insertRow.published,
        createdAt: insertRow.created_at,
      },
    },
    headers: {},
    params: (v) => {
      const o = v.object;
      return [o.author_id, o.owner_id, o.title, o.body, o.rating, o.published, o.created_at];
    },
    check: (d) => {
      const r = d?.insert_articles?.returning;
      return Array.isArray(r) && r.length === 1 && Number.isInteger(r[0].id) && r[0].id > 100000 && r[0].title === insertRow.title
        ? null
        : 'expected one new article (id > 100000) with its title';
    },
    fromPostgraphile: (d) => ({
      insert_articles: { returning: d.createArticle?.article ? [{ id: d.createArticle.article.rowId, title: d.createArticle.article.title }] : [] },
    }),
  },
];

function renameArticle(x) {
  const out = {};
  for (const [k, v] of Object.entries(x)) {
    const key = k === 'rowId' ? 'id' : k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    out[key] = v;
  }
  return out;
}

export const SCENARIO_IDS = SCENARIOS.map((s) => s.id);
export const byId = Object.fromEntries(SCENARIOS.map((s) => [s.id, s]));

export function loadQueries(s) {
  return {
    hasura: q(`${s.id}.hasura.graphql`),
    postgraphile: q(`${s.id}.postgraphile.graphql`),
    sql: q(`${s.id}.sql`),
  };
}

/**
 * Deep equality for checking one target's data against the raw baseline's. Strings that are
 * both timestamps compare by instant (PostgreSQL and PostGraphile may print them differently).
 * @returns {string|null} path of the first difference, or null
 */
export function diff(a, b, path = '$') {
  if (a === b) return null;
  if (typeof a === 'string' && typeof b === 'string') {
    const ta = /^\d{4}-\d\d-\d\dT/.test(a) ? Date.parse(a) : NaN;
    const tb = /^\d{4}-\d\d-\d\dT/.test(b) ? Date.parse(b) : NaN;
    if (!Number.isNaN(ta) && ta === tb) return null;
    return `${path}: ${JSON.stringify(a).slice(0, 60)} ≠ ${JSON.stringify(b).slice(0, 60)}`;
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') {
    return `${path}: ${JSON.stringify(a)?.slice(0, 60)} ≠ ${JSON.stringify(b)?.slice(0, 60)}`;
  }
  if (Array.isArray(a) !== Array.isArray(b)) return `${path}: array vs object`;
  if (Array.isArray(a)) {
    if (a.length !== b.length) return `${path}: length ${a.length} ≠ ${b.length}`;
    for (let i = 0; i < a.length; i++) {
      const d = diff(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  if (ka.join() !== kb.join()) return `${path}: keys {${ka}} ≠ {${kb}}`;
  for (const k of ka) {
    const d = diff(a[k], b[k], `${path}.${k}`);
    if (d) return d;
  }
  return null;
}
