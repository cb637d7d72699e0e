/**
 * Issue 37 item 2 with the real client: Apollo Client 3 with its persisted-query link
 * (`@apollo/client/link/persisted-queries`), over POST and with `useGETForHashedQueries`, against a
 * real server and PostgreSQL. Every request the client sends is recorded at its fetch so the test
 * sees the protocol as Apollo speaks it (hash first, the text only after PersistedQueryNotFound).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client/core/index.js';
import { createPersistedQueryLink } from '@apollo/client/link/persisted-queries/index.js';
import { query, startTestServer, type TestServer } from '../helpers/server.js';

const SETUP = {
  type: 'bulk',
  args: [
    { type: 'run_sql', args: { sql: "create table book (id int primary key, title text); insert into book values (1, 'Dune'), (2, 'Emma');" } },
    { type: 'track_table', args: { name: 'book' } },
    {
      type: 'create_select_permission',
      args: { table: 'book', role: 'user', permission: { columns: ['id', 'title'], filter: { id: { _eq: 'X-Svc-Book-Id' } } } },
    },
  ],
};

interface Sent {
  method: string;
  hasText: boolean;
  hash?: string;
}

function client(url: string, useGET: boolean, sent: Sent[], headers: Record<string, string> = {}) {
  const recordingFetch: typeof fetch = async (input, init) => {
    const u = new URL(String(input));
    const method = init?.method ?? 'GET';
    let body: any = {};
    if (method === 'POST') body = JSON.parse(String(init?.body));
    else body = { query: u.searchParams.get('query') ?? undefined, extensions: JSON.parse(u.searchParams.get('extensions') ?? '{}') };
    sent.push({ method, hasText: typeof body.query === 'string' && body.query.length > 0, hash: body.extensions?.persistedQuery?.sha256Hash });
    return fetch(input, init);
  };
  const link = createPersistedQueryLink({ sha256: (q: string) => createHash('sha256').update(q).digest('hex'), useGETForHashedQueries: useGET }).concat(
    new HttpLink({ uri: `${url}/v1/graphql`, fetch: recordingFetch, headers }),
  );
  return new ApolloClient({ link, cache: new InMemoryCache(), defaultOptions: { query: { fetchPolicy: 'no-cache' } } });
}

describe("Apollo Client's persisted-query link", () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    await query(s.url, SETUP);
  });
  after(() => s?.close());

  test('over POST: the hash alone, then the text once, then the hash alone again', async () => {
    const sent: Sent[] = [];
    const c = client(s.url, false, sent);
    const Q = gql`
      query Books {
        book(order_by: { id: asc }) {
          id
          title
        }
      }
    `;
    const first = await c.query({ query: Q });
    assert.deepEqual(first.data, {
      book: [
        { __typename: 'book', id: 1, title: 'Dune' },
        { __typename: 'book', id: 2, title: 'Emma' },
      ],
    });
    const second = await c.query({ query: Q });
    assert.deepEqual(second.data, first.data);
    assert.deepEqual(
      sent.map((x) => [x.method, x.hasText]),
      [
        ['POST', false], // unknown hash → PersistedQueryNotFound
        ['POST', true], // the link resends with the text: registered
        ['POST', false], // known hash: answered without the text
      ],
    );
    assert.ok(sent.every((x) => x.hash && x.hash === sent[0]!.hash));
  });

  test('with useGETForHashedQueries: GET with the hash, the text over POST, then GET; session variables apply', async () => {
    const sent: Sent[] = [];
    const c = client(s.url, true, sent, { 'x-svc-role': 'user', 'x-svc-book-id': '2' });
    const Q = gql`
      query Mine($id: Int!) {
        book_by_pk(id: $id) {
          title
        }
        all: book {
          id
        }
      }
    `;
    const r1 = await c.query({ query: Q, variables: { id: 2 } });
    assert.deepEqual(r1.data, { book_by_pk: { __typename: 'book', title: 'Emma' }, all: [{ __typename: 'book', id: 2 }] });
    const r2 = await c.query({ query: Q, variables: { id: 1 } });
    assert.deepEqual(r2.data, { book_by_pk: null, all: [{ __typename: 'book', id: 2 }] });
    assert.deepEqual(
      sent.map((x) => [x.method, x.hasText]),
      [
        ['GET', false],
        ['POST', true],
        ['GET', false],
      ],
    );
  });

  test('a mutation through the link goes over POST (never GET) and is answered', async () => {
    const sent: Sent[] = [];
    const c = client(s.url, true, sent);
    const M = gql`
      mutation Add($id: Int!, $t: String!) {
        insert_book_one(object: { id: $id, title: $t }) {
          id
        }
      }
    `;
    const r = await c.mutate({ mutation: M, variables: { id: 3, t: 'Ulysses' } });
    assert.deepEqual(r.data, { insert_book_one: { __typename: 'book', id: 3 } });
    assert.ok(sent.length >= 1 && sent.every((x) => x.method === 'POST'), JSON.stringify(sent));
  });
});
