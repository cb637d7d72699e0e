/**
 * Seeded generator of /v1/query metadata requests for the property test:
 * about half of them valid against the current model state, the others
 * invalid in one specific way (unknown column/table/function, duplicate,
 * admin role, untracked remote table, dependents without cascade, malformed
 * arguments, …). Validity is decided by the model, not here: the generator
 * only aims.
 */
import { COLUMNS, FUNCTIONS, Reject, TABLES, apply, exportState, model, relTarget, type Json, type MState, type PermKind, type Request } from './model.js';

type Obj = { [k: string]: Json };

/** mulberry32: small, fast, good enough, and the same on every platform */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('pick from an empty list');
    return xs[this.int(xs.length)]!;
  }
  /** a random non-empty subset, in the original order */
  subset<T>(xs: readonly T[]): T[] {
    const out = xs.filter(() => this.chance(0.5));
    return out.length ? out : [this.pick(xs)];
  }
}

const ROLES = ['user', 'editor', 'anonymous'];
const REL_NAMES = ['author', 'writer', 'articles', 'posts', 'published', 'stats', 'title'];
const CF_NAMES = ['full_name', 'display_name', 'name', 'articles'];
const COLLECTIONS = ['c_one', 'c_two', 'c_three'];
const QUERY_NAMES = ['q1', 'q2', 'q3'];
const QUERIES = ['query { author { id name } }', 'query Q { article(limit: 1) { id title } }', '{ search_articles(args: {search: "a"}) { id } }'];
const BAD_QUERIES = ['query { author { id }', 'query { }', '{{ nope'];
/** per table, disjoint pools of custom root field names (no clash across tables) */
const ROOT_NAMES: Record<string, Record<string, string[]>> = {
  author: {
    select: ['Authors', 'AllAuthors'],
    select_by_pk: ['AuthorByPk'],
    select_aggregate: ['AuthorsAgg'],
    insert: ['AddAuthors'],
    insert_one: ['AddAuthor'],
    update: ['UpdateAuthors'],
    update_by_pk: ['UpdateAuthor'],
    delete: ['DeleteAuthors'],
    delete_by_pk: ['DeleteAuthor'],
  },
  article: {
    select: ['Articles', 'AllArticles'],
    select_by_pk: ['ArticleByPk'],
    select_aggregate: ['ArticlesAgg'],
    insert: ['AddArticles'],
    insert_one: ['AddArticle'],
    update: ['UpdateArticles'],
    update_by_pk: ['UpdateArticle'],
    delete: ['DeleteArticles'],
    delete_by_pk: ['DeleteArticle'],
  },
  published_articles: {
    select: ['Published', 'AllPublished'],
    select_aggregate: ['PublishedAgg'],
    insert: ['AddPublished'],
    insert_one: ['AddOnePublished'],
    update: ['UpdatePublished'],
    delete: ['DeletePublished'],
  },
};
/** custom GraphQL names for columns (some swap, some clash on purpose) */
const COLUMN_NAMES = ['Id', 'ident', 'full_name', 'heading', 'title', 'name', 'authorId', 'isPublished', 'author', 'articles'];

function accepts(s: MState, req: Request): boolean {
  try {
    apply(s, req);
    return true;
  } catch (e) {
    if (e instanceof Reject) return false;
    throw e;
  }
}

const tq = (rng: Rng, name: string): Json => (rng.chance(0.5) ? name : { schema: 'public', name });

export class Generator {
  constructor(readonly rng: Rng) {}

  /** a table: mostly tracked ones, sometimes untracked or non-existent */
  private table(s: MState, validBias = 0.8): string {
    const tracked = s.tables.map((t) => t.name);
    if (tracked.length && this.rng.chance(validBias)) return this.rng.pick(tracked);
    return this.rng.chance(0.85) ? this.rng.pick(TABLES) : 'ghost';
  }

  /**
   * The next request: aims at a success about half of the time (candidates
   * are drawn until the model agrees, a few tries at most), so that the state
   * grows rich enough for dependencies and cascades to matter.
   */
  next(s: MState, wantValid = this.rng.chance(0.5)): Request {
    let req = this.draw(s);
    for (let i = 0; i < 12 && accepts(s, req) !== wantValid; i++) req = this.draw(s);
    return req;
  }

  private draw(s: MState): Request {
    const r = this.rng;
    const w: Array<[number, () => Request]> = [
      [10, () => this.trackTable(s)],
      [4, () => this.untrackTable(s)],
      [9, () => this.createRelationship(s)],
      [4, () => this.dropRelationship(s)],
      [3, () => this.renameRelationship(s)],
      [2, () => this.setRelationshipComment(s)],
      [14, () => this.createPermission(s)],
      [4, () => this.dropPermission(s)],
      [3, () => this.setPermissionComment(s)],
      [5, () => this.addComputedField(s)],
      [2, () => this.dropComputedField(s)],
      [4, () => this.trackFunction(s)],
      [2, () => this.untrackFunction(s)],
      [4, () => this.setCustomFields(s)],
      [3, () => this.createCollection()],
      [2, () => this.dropCollection(s)],
      [3, () => this.addQuery(s)],
      [2, () => this.dropQuery(s)],
      [3, () => this.addToAllowlist(s)],
      [2, () => this.dropFromAllowlist(s)],
      [3, () => this.malformed(s)],
      [4, () => this.bulk(s)],
      [2, () => ({ type: 'replace_metadata', args: exportState(s) as Json })],
    ];
    const total = w.reduce((a, [n]) => a + n, 0);
    let x = r.int(total);
    for (const [n, f] of w) {
      if (x < n) return f();
      x -= n;
    }
    throw new Error('unreachable');
  }

  /** 2–3 requests, each drawn against the state the previous ones leave; one of them may fail */
  private bulk(s: MState): Request {
    const n = 2 + this.rng.int(2);
    const args: Json[] = [];
    let cur = s;
    for (let i = 0; i < n; i++) {
      let q: Request;
      do q = this.next(cur, this.rng.chance(0.8));
      while (q.type === 'bulk' || q.type === 'replace_metadata');
      args.push(q as unknown as Json);
      try {
        cur = apply(cur, q);
      } catch (e) {
        if (!(e instanceof Reject)) throw e;
      }
    }
    return { type: 'bulk', args };
  }

  // ------------------------------------------------------------ tables

  private configuration(table: string): Obj {
    const r = this.rng;
    const out: Obj = {};
    if (r.chance(0.6)) {
      const pool = ROOT_NAMES[table] ?? ROOT_NAMES.author!;
      const crf: Obj = {};
      for (const k of r.subset(Object.keys(pool))) crf[k] = r.pick(pool[k]!);
      if (r.chance(0.1)) crf.select = 'not-a-name';
      if (r.chance(0.1)) crf.select_by_pk = crf.select ?? 'Dup';
      if (r.chance(0.1)) crf.update = null;
      out.custom_root_fields = crf;
    }
    if (r.chance(0.6)) {
      const cols = COLUMNS[table] ?? ['id'];
      const ccn: Obj = {};
      if (r.chance(0.2) && cols.includes('title') && cols.includes('published')) {
        ccn.title = 'published';
        ccn.published = 'title'; // a swap: valid
      } else {
        for (const c of r.subset(cols)) if (r.chance(0.5)) ccn[c] = r.pick(COLUMN_NAMES);
      }
      if (r.chance(0.08)) ccn.nope = 'nope';
      out.custom_column_names = ccn;
    }
    return out;
  }

  private trackTable(s: MState): Request {
    const r = this.rng;
    const untracked = TABLES.filter((t) => !model.isTracked(s, t));
    const table = untracked.length && r.chance(0.75) ? r.pick(untracked) : r.chance(0.7) ? r.pick(TABLES) : 'ghost';
    switch (r.int(5)) {
      case 0:
        return { type: 'track_table', args: table };
      case 1:
        return { type: 'track_table', args: { schema: 'public', name: table, ...(r.chance(0.1) ? { is_enum: true } : {}) } };
      case 2:
        return { type: 'track_table', args: { table: tq(r, table) } };
      default: {
        const args: Obj = { table: tq(r, table) };
        if (r.chance(0.8)) args.configuration = this.configuration(table);
        return { type: 'track_table', version: 2, args };
      }
    }
  }

  private untrackTable(s: MState): Request {
    const args: Obj = { table: { schema: 'public', name: this.table(s) } };
    if (this.rng.chance(0.6)) args.cascade = this.rng.chance(0.6);
    return { type: 'untrack_table', args };
  }

  private setCustomFields(s: MState): Request {
    const table = this.table(s, 0.9);
    const cfg = this.configuration(table);
    return { type: 'set_table_custom_fields', version: 2, args: { table: tq(this.rng, table), ...cfg } };
  }

  // ------------------------------------------------------------ relationships

  private createRelationship(s: MState): Request {
    const r = this.rng;
    const table = this.table(s, 0.85);
    const comment: Obj = r.chance(0.2) ? { comment: r.pick(['the writer', 'all posts']) } : {};
    const name = r.pick(REL_NAMES);
    const other = r.chance(0.9) ? r.pick(TABLES) : 'ghost';
    const manual = (kind: 'object' | 'array'): Request => {
      const lcols = COLUMNS[table] ?? ['id'];
      const rcols = COLUMNS[other] ?? ['id'];
      // a meaningful mapping most of the time
      let mapping: Obj;
      if (table === 'author') mapping = { id: rcols.includes('author_id') ? 'author_id' : 'id' };
      else if (other === 'author') mapping = { [lcols.includes('author_id') ? 'author_id' : 'id']: 'id' };
      else mapping = { id: 'id' };
      if (r.chance(0.15)) mapping = { [r.chance(0.5) ? 'nope' : r.pick(lcols)]: r.chance(0.5) ? 'nope' : r.pick(rcols) };
      return {
        type: `create_${kind}_relationship`,
        args: { table: tq(r, table), name, using: { manual_configuration: { remote_table: tq(r, other), column_mapping: mapping } }, ...comment },
      };
    };
    if (r.chance(0.5)) {
      // the relationships this schema is made for
      const t = r.chance(0.85) ? table : this.table(s);
      const nm = (names: string[]) => (r.chance(0.85) ? r.pick(names) : name);
      const options: Request[] = {
        article: [
          {
            type: 'create_object_relationship',
            args: { table: tq(r, t), name: nm(['author', 'writer']), using: { foreign_key_constraint_on: 'author_id' }, ...comment },
          },
          {
            type: 'create_array_relationship',
            args: {
              table: tq(r, t),
              name: nm(['published', 'posts']),
              using: { manual_configuration: { remote_table: tq(r, 'published_articles'), column_mapping: { id: 'id' } } },
            },
          },
        ],
        author: [
          {
            type: 'create_array_relationship',
            args: {
              table: tq(r, t),
              name: nm(['articles', 'posts']),
              using: { foreign_key_constraint_on: { table: tq(r, 'article'), column: 'author_id' } },
              ...comment,
            },
          },
          {
            type: 'create_array_relationship',
            args: {
              table: tq(r, t),
              name: nm(['published', 'posts']),
              using: { manual_configuration: { remote_table: tq(r, 'published_articles'), column_mapping: { id: 'author_id' } } },
            },
          },
        ],
        published_articles: [
          {
            type: 'create_object_relationship',
            args: {
              table: tq(r, t),
              name: nm(['author', 'writer']),
              using: { manual_configuration: { remote_table: tq(r, 'author'), column_mapping: { author_id: 'id' } } },
              ...comment,
            },
          },
          {
            type: 'create_object_relationship',
            args: {
              table: tq(r, t),
              name: nm(['stats', 'posts']),
              using: { manual_configuration: { remote_table: tq(r, 'article'), column_mapping: { id: 'id' } } },
            },
          },
        ],
      }[t] ?? [{ type: 'create_object_relationship', args: { table: tq(r, t), name, using: { foreign_key_constraint_on: 'author_id' } } }];
      return r.pick(options);
    }
    switch (r.int(4)) {
      case 0: {
        const col = r.chance(0.85) ? 'author_id' : r.pick(['title', 'nope']);
        return { type: 'create_object_relationship', args: { table: tq(r, table), name, using: { foreign_key_constraint_on: col }, ...comment } };
      }
      case 1: {
        const col = r.chance(0.85) ? 'author_id' : r.pick(['title', 'nope']);
        const rt = r.chance(0.8) ? 'article' : other;
        return {
          type: 'create_array_relationship',
          args: { table: tq(r, table), name, using: { foreign_key_constraint_on: { table: tq(r, rt), column: col } }, ...comment },
        };
      }
      case 2:
        return manual('object');
      default:
        return manual('array');
    }
  }

  /** an existing relationship (most of the time) */
  private rel(s: MState): [string, string] {
    const all = s.tables.flatMap((t) => model.allRels(t).map((x) => [t.name, x.name] as [string, string]));
    if (all.length && this.rng.chance(0.85)) return this.rng.pick(all);
    return [this.table(s), this.rng.pick(REL_NAMES)];
  }

  private dropRelationship(s: MState): Request {
    const [table, name] = this.rel(s);
    const args: Obj = { table: tq(this.rng, table), relationship: name };
    if (this.rng.chance(0.7)) args.cascade = this.rng.chance(0.5);
    return { type: 'drop_relationship', args };
  }

  private setRelationshipComment(s: MState): Request {
    const [table, name] = this.rel(s);
    return {
      type: 'set_relationship_comment',
      args: { table: tq(this.rng, table), relationship: name, comment: this.rng.chance(0.6) ? 'about this relationship' : null },
    };
  }

  private renameRelationship(s: MState): Request {
    const [table, name] = this.rel(s);
    return {
      type: 'rename_relationship',
      args: { table: tq(this.rng, table), name, new_name: this.rng.pick([...REL_NAMES, 'renamed', 'renamed_again', 'id']) },
    };
  }

  // ------------------------------------------------------------ permissions

  /** a boolean expression on `table`, possibly through relationships (depth ≤ 2) */
  boolExp(s: MState, table: string, depth = 0): Obj {
    const r = this.rng;
    const cols = COLUMNS[table] ?? ['id'];
    const t = model.findTable(s, table);
    const rels = t ? model.allRels(t) : [];
    const roll = r.int(10);
    if (roll < 2) return {};
    if (roll < 4) return { id: { _eq: 'X-Svc-User-Id' } };
    if (roll < 5) return { _or: [{ [r.pick(cols)]: { _is_null: false } }, { id: { _gt: 10 } }] };
    if (roll < 6) {
      // a scalar computed field is compared like a column (server extension over v1.3)
      const cfs = t?.computed_fields ?? [];
      if (cfs.length && r.chance(0.5)) return { [r.pick(cfs).name]: { _ilike: '%a%' } };
      return { _not: { [r.pick(cols)]: { _is_null: true } } };
    }
    if (roll < 9 && rels.length && depth < 2) {
      const rel = r.pick(rels);
      return { [rel.name]: this.boolExp(s, relTarget(table, rel), depth + 1) };
    }
    // invalid
    return r.pick<Obj>([{ nope: { _eq: 1 } }, { id: { _foo: 1 } }, { [r.pick(REL_NAMES)]: {} }]);
  }

  private columns(table: string): Json {
    const r = this.rng;
    const cols = COLUMNS[table] ?? ['id'];
    if (r.chance(0.3)) return '*';
    const list: Json[] = r.subset(cols);
    if (r.chance(0.1)) list.push(r.pick(['nope', 'author']));
    return list;
  }

  private permission(s: MState, kind: PermKind, table: string): Obj {
    const r = this.rng;
    const cols = COLUMNS[table] ?? ['id'];
    switch (kind) {
      case 'select': {
        const p: Obj = { columns: this.columns(table), filter: this.boolExp(s, table) };
        const cfs = model.findTable(s, table)?.computed_fields.map((c) => c.name) ?? [];
        if (r.chance(0.4)) p.computed_fields = cfs.length && r.chance(0.8) ? r.subset(cfs) : r.chance(0.5) ? [] : ['full_name'];
        if (r.chance(0.3)) p.limit = r.pick([0, 10, 100]);
        if (r.chance(0.3)) p.allow_aggregations = r.chance(0.7);
        return p;
      }
      case 'insert': {
        const p: Obj = { check: this.boolExp(s, table) };
        if (r.chance(0.5)) p.columns = this.columns(table);
        const presettable = cols.filter((c) => c !== 'id');
        if (r.chance(0.3)) p.set = r.chance(0.9) ? { [r.pick(presettable.length ? presettable : cols)]: 'X-Svc-User-Id' } : { nope: 1 };
        if (r.chance(0.15)) p.backend_only = true;
        return p;
      }
      case 'update': {
        const p: Obj = { columns: this.columns(table), filter: this.boolExp(s, table) };
        if (r.chance(0.4)) p.check = this.boolExp(s, table);
        if (r.chance(0.3)) p.set = { [r.pick(cols)]: 'X-Svc-User-Id' };
        return p;
      }
      case 'delete':
        return { filter: this.boolExp(s, table) };
    }
  }

  private createPermission(s: MState): Request {
    const r = this.rng;
    const kind = r.pick(['select', 'select', 'insert', 'update', 'delete'] as const);
    const table = this.table(s, 0.9);
    const role = r.chance(0.06) ? 'admin' : r.pick(ROLES);
    const args: Obj = { table: tq(r, table), role, permission: this.permission(s, kind, table) };
    if (r.chance(0.2)) args.comment = 'some comment';
    return { type: `create_${kind}_permission`, args };
  }

  /** an existing permission (most of the time) */
  private perm(s: MState): [string, PermKind, string] {
    const all = s.tables.flatMap((t) =>
      (['insert', 'select', 'update', 'delete'] as const).flatMap((k) => model.perms(t, k).map((p) => [t.name, k, p.role] as [string, PermKind, string])),
    );
    if (all.length && this.rng.chance(0.8)) return this.rng.pick(all);
    return [this.table(s), this.rng.pick(['insert', 'select', 'update', 'delete'] as const), this.rng.pick(ROLES)];
  }

  private dropPermission(s: MState): Request {
    const [table, kind, role] = this.perm(s);
    return { type: `drop_${kind}_permission`, args: { table: tq(this.rng, table), role } };
  }

  private setPermissionComment(s: MState): Request {
    const [table, kind, role] = this.perm(s);
    const r = this.rng;
    return {
      type: 'set_permission_comment',
      args: { table: tq(r, table), role, type: r.chance(0.95) ? kind : 'upsert', comment: r.chance(0.6) ? r.pick(['hello', 'who can see what']) : null },
    };
  }

  // ------------------------------------------------------------ computed fields, functions

  private addComputedField(s: MState): Request {
    const r = this.rng;
    const table = r.chance(0.7) ? 'author' : this.table(s);
    const definition: Obj = { function: tq(r, r.chance(0.75) ? 'author_full_name' : r.pick([...Object.keys(FUNCTIONS), 'nope'])) };
    if (r.chance(0.3)) definition.table_argument = r.chance(0.8) ? 'author_row' : 'nope';
    const args: Obj = { table: tq(r, table), name: r.pick(CF_NAMES), definition };
    if (r.chance(0.2)) args.comment = 'computed';
    return { type: 'add_computed_field', args };
  }

  private dropComputedField(s: MState): Request {
    const r = this.rng;
    const all = s.tables.flatMap((t) => t.computed_fields.map((c) => [t.name, c.name] as const));
    const [table, name] = all.length && r.chance(0.8) ? r.pick(all) : ([this.table(s), r.pick(CF_NAMES)] as const);
    const args: Obj = { table: tq(r, table), name };
    if (r.chance(0.7)) args.cascade = r.chance(0.5);
    return { type: 'drop_computed_field', args };
  }

  private trackFunction(s: MState): Request {
    const r = this.rng;
    const untracked = ['search_articles', 'my_articles'].filter((f) => !s.functions.some((x) => x.name === f));
    const fn = untracked.length && r.chance(0.7) ? r.pick(untracked) : r.pick([...Object.keys(FUNCTIONS), 'nope']);
    if (r.chance(0.4)) return { type: 'track_function', args: r.chance(0.5) ? fn : { schema: 'public', name: fn } };
    const args: Obj = { function: tq(r, fn) };
    if (r.chance(0.6)) args.configuration = r.chance(0.3) ? {} : { session_argument: r.pick(['hasura_session', 'hasura_session', 'search']) };
    return { type: 'track_function', version: 2, args };
  }

  private untrackFunction(s: MState): Request {
    const r = this.rng;
    const fn = s.functions.length && r.chance(0.8) ? r.pick(s.functions).name : r.pick([...Object.keys(FUNCTIONS), 'nope']);
    return { type: 'untrack_function', args: { schema: 'public', name: fn } };
  }

  // ------------------------------------------------------------ collections

  private collection(s: MState): string {
    return s.collections.length && this.rng.chance(0.8) ? this.rng.pick(s.collections).name : this.rng.pick(COLLECTIONS);
  }

  private createCollection(): Request {
    const r = this.rng;
    const n = r.int(3);
    const queries: Json[] = [];
    for (let i = 0; i < n; i++) queries.push({ name: r.chance(0.9) ? QUERY_NAMES[i]! : 'q1', query: r.chance(0.9) ? r.pick(QUERIES) : r.pick(BAD_QUERIES) });
    const args: Obj = { name: r.pick(COLLECTIONS), definition: { queries } };
    if (r.chance(0.3)) args.comment = 'a collection';
    return { type: 'create_query_collection', args };
  }

  private dropCollection(s: MState): Request {
    return { type: 'drop_query_collection', args: { collection: this.collection(s), cascade: this.rng.chance(0.5) } };
  }

  private addQuery(s: MState): Request {
    const r = this.rng;
    return {
      type: 'add_query_to_collection',
      args: { collection_name: this.collection(s), query_name: r.pick(QUERY_NAMES), query: r.chance(0.85) ? r.pick(QUERIES) : r.pick(BAD_QUERIES) },
    };
  }

  private dropQuery(s: MState): Request {
    const r = this.rng;
    const c = s.collections.find((x) => x.queries.length);
    if (c && r.chance(0.7)) return { type: 'drop_query_from_collection', args: { collection_name: c.name, query_name: r.pick(c.queries).name } };
    return { type: 'drop_query_from_collection', args: { collection_name: this.collection(s), query_name: r.pick(QUERY_NAMES) } };
  }

  private addToAllowlist(s: MState): Request {
    return { type: 'add_collection_to_allowlist', args: { collection: this.collection(s) } };
  }

  private dropFromAllowlist(s: MState): Request {
    const r = this.rng;
    const c = s.allowlist.length && r.chance(0.7) ? r.pick(s.allowlist) : this.collection(s);
    return { type: 'drop_collection_from_allowlist', args: { collection: c } };
  }

  // ------------------------------------------------------------ malformed requests

  private malformed(s: MState): Request {
    const r = this.rng;
    const table = this.table(s);
    return r.pick<Request>([
      { type: 'no_such_operation', args: {} },
      { type: 'create_select_permission', args: { table, role: 'user' } },
      { type: 'create_select_permission', args: { table, role: 7, permission: { columns: '*', filter: {} } } },
      { type: 'create_select_permission', args: { table, role: 'user', permission: { columns: '*', filter: {}, limit: -1 } } },
      { type: 'create_object_relationship', args: { table, name: 'author', using: {} } },
      { type: 'create_object_relationship', args: { table, name: '', using: { foreign_key_constraint_on: 'author_id' } } },
      { type: 'track_table', version: 2, args: { configuration: {} } },
      { type: 'track_table', version: 2, args: { table, unexpected: true } },
      { type: 'drop_relationship', args: { table } },
      { type: 'create_query_collection', args: { name: 'c_one', definition: { queries: 'nope' } } },
      { type: 'drop_query_collection', args: { collection: this.collection(s) } },
      { type: 'set_permission_comment', args: { table, role: 'user', comment: 'x' } },
      { type: 'untrack_table', args: { table, cascade: 'yes' } },
    ]);
  }
}
