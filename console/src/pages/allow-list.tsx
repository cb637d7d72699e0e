/**
 * Query collections and the allow-list: collections with their named queries (checked as GraphQL
 * in the browser before they are sent), adding and dropping queries and collections, and which
 * collections are in the allow-list (what non-admin roles may run when the server enforces it).
 * /console/allow-list
 *
 * Read from export_metadata and /v1alpha1/config; changed with create_query_collection,
 * drop_query_collection, add_query_to_collection, drop_query_from_collection,
 * add_collection_to_allowlist and drop_collection_from_allowlist.
 */
import { parse } from 'graphql';
import { useId, useState, type FormEvent } from 'react';
import { query, serverConfig } from '../api';
import { loadMetadata } from '../data/load';
import type { PageMeta } from '../pages';
import { useTitle } from '../router';
import { ConfirmButton, ErrorBox, Loading, PageHeader, Status, useAction, useAsync } from '../ui';

export const meta: PageMeta = {
  path: 'allow-list',
  title: 'Allow list',
  order: 80,
  description: 'Query collections and the allow-list of queries non-admin roles may run',
};

interface Collection {
  name: string;
  comment?: string | null;
  definition: { queries: Array<{ name: string; query: string }> };
}

/** The problem of a GraphQL document, if any (line and column of a syntax error). */
export function graphqlProblem(text: string): string | undefined {
  if (!text.trim()) return 'the query is empty';
  try {
    parse(text);
    return undefined;
  } catch (e) {
    return (e as Error).message.replace(/^Syntax Error: /, 'not valid GraphQL: ');
  }
}

export default function AllowListPage() {
  useTitle(meta.title);
  const id = useId();
  const action = useAction();
  const state = useAsync(async () => {
    const [md, config] = await Promise.all([loadMetadata(), serverConfig().catch(() => undefined)]);
    return {
      collections: ((md.query_collections ?? []) as Collection[]).sort((a, b) => a.name.localeCompare(b.name)),
      allowed: new Set(((md.allowlist ?? []) as Array<{ collection: string }>).map((a) => a.collection)),
      enforced: config?.is_allow_list_enabled,
    };
  }, []);
  const [name, setName] = useState('');
  const [comment, setComment] = useState('');
  const [allow, setAllow] = useState(true);
  const act = (fn: () => Promise<unknown>, done: string) => action.run(fn, done).then((ok) => {
    if (ok) state.reload();
    return ok;
  });
  const create = (e: FormEvent) => {
    e.preventDefault();
    void act(async () => {
      await query('create_query_collection', { name, definition: { queries: [] }, ...(comment ? { comment } : {}) });
      if (allow) await query('add_collection_to_allowlist', { collection: name });
    }, `Created collection ${name}`).then((ok) => {
      if (!ok) return;
      setName('');
      setComment('');
    });
  };
  const data = state.data;
  return (
    <>
      <PageHeader title="Allow list" />
      <p>
        {data?.enforced === undefined ? '' : data.enforced
          ? 'The server enforces the allow-list: roles other than admin may run only the queries of the collections in it.'
          : 'The server does not enforce the allow-list now (start it with --enable-allowlist to do so); the collections are kept.'}
      </p>
      <ErrorBox error={action.error} title="Not changed" />
      <Status message={action.done} />
      <ErrorBox error={state.error} title="Could not load" />
      {!data ? <Loading what="query collections" /> : data.collections.length === 0 ? <p className="muted">No query collections yet.</p> : (
        data.collections.map((c) => <CollectionView key={c.name} collection={c} allowed={data.allowed.has(c.name)} act={act} busy={action.busy} />)
      )}
      <section aria-labelledby={`${id}-h`}>
        <h2 id={`${id}-h`}>Create a collection</h2>
        <form onSubmit={create} aria-label="Create a collection">
          <div className="inline">
            <div className="field"><label htmlFor={`${id}-name`}>Collection name</label><input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} required /></div>
            <div className="field grow"><label htmlFor={`${id}-comment`}>Comment</label><input id={`${id}-comment`} value={comment} onChange={(e) => setComment(e.target.value)} /></div>
          </div>
          <div className="checks"><label><input type="checkbox" checked={allow} onChange={(e) => setAllow(e.target.checked)} /> Add it to the allow-list</label></div>
          <p><button type="submit" className="primary" disabled={action.busy}>Create collection</button></p>
        </form>
      </section>
    </>
  );
}

function CollectionView({ collection: c, allowed, act, busy }: {
  collection: Collection;
  allowed: boolean;
  act: (fn: () => Promise<unknown>, done: string) => Promise<boolean>;
  busy: boolean;
}) {
  const id = useId();
  const [qName, setQName] = useState('');
  const [text, setText] = useState('');
  const [touched, setTouched] = useState(false);
  const problem = graphqlProblem(text);
  const add = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (problem) return;
    void act(() => query('add_query_to_collection', { collection_name: c.name, query_name: qName, query: text }), `Added ${qName} to ${c.name}`).then((ok) => {
      if (!ok) return;
      setQName('');
      setText('');
      setTouched(false);
    });
  };
  return (
    <section aria-labelledby={`${id}-h`} className="collection">
      <header className="page-header">
        <h2 id={`${id}-h`}>Collection {c.name}</h2>
        <span className={allowed ? 'badge on' : 'badge'}>{allowed ? 'in the allow-list' : 'not in the allow-list'}</span>
        <div className="page-actions">
          <button type="button" disabled={busy} onClick={() => act(
            () => query(allowed ? 'drop_collection_from_allowlist' : 'add_collection_to_allowlist', { collection: c.name }),
            allowed ? `Removed ${c.name} from the allow-list` : `Added ${c.name} to the allow-list`,
          )}>{allowed ? 'Remove from allow-list' : 'Add to allow-list'}</button>
          <ConfirmButton text="Drop" label={`Drop collection ${c.name}`} danger disabled={busy}
            question={<>Drop the collection <strong>{c.name}</strong> and its queries{allowed ? ' (and take it out of the allow-list)' : ''}?</>}
            onConfirm={() => void act(() => query('drop_query_collection', { collection: c.name, cascade: true }), `Dropped collection ${c.name}`)} />
        </div>
      </header>
      {c.comment && <p className="muted">{c.comment}</p>}
      {c.definition.queries.length === 0 ? <p className="muted">No queries.</p> : (
        <ul className="queries">
          {c.definition.queries.map((q) => (
            <li key={q.name}>
              <div className="inline">
                <strong>{q.name}</strong>
                <ConfirmButton text="Drop" label={`Drop query ${q.name}`} danger disabled={busy} question={<>Drop the query <strong>{q.name}</strong> from {c.name}?</>}
                  onConfirm={() => void act(() => query('drop_query_from_collection', { collection_name: c.name, query_name: q.name }), `Dropped ${q.name} from ${c.name}`)} />
              </div>
              <pre className="json" tabIndex={0} aria-label={`query ${q.name}`}>{q.query}</pre>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={add} aria-label={`Add a query to ${c.name}`}>
        <div className="field"><label htmlFor={`${id}-qname`}>Query name</label><input id={`${id}-qname`} value={qName} onChange={(e) => setQName(e.target.value)} required /></div>
        <div className="field">
          <label htmlFor={`${id}-query`}>Query <span className="hint">(GraphQL, exactly as clients send it)</span></label>
          <textarea id={`${id}-query`} className="code" rows={4} value={text} spellCheck={false} onChange={(e) => { setTouched(true); setText(e.target.value); }}
            aria-invalid={touched && !!problem} aria-describedby={touched && problem ? `${id}-problem` : undefined} />
          {touched && problem && <p id={`${id}-problem`} className="error" role="alert">{problem}</p>}
        </div>
        <p><button type="submit" disabled={busy}>Add query</button></p>
      </form>
    </section>
  );
}
