/**
 * GraphiQL (loaded only on the API explorer page: Monaco is large). Plugins: the documentation
 * explorer and history (GraphiQL's own), the query-builder explorer, and "Explain", which shows
 * the SQL and PostgreSQL plan of the current operation for the role in the request headers.
 */
import { explorerPlugin } from '@graphiql/plugin-explorer';
import '@graphiql/plugin-explorer/style.css';
import { useHeadersEditorState, useOperationsEditorState, useVariablesEditorState, type GraphiQLPlugin } from '@graphiql/react';
import { GraphiQL, HISTORY_PLUGIN } from 'graphiql';
import 'graphiql/setup-workers/vite';
import 'graphiql/style.css';
import { useRef, useState } from 'react';
import { explain, errorMessage, type ExplainPlan } from '../api';
import { isSubscription, postGraphql, requestHeaders, subscribe, type FetchParams } from './fetcher';
import { parseJsonObject, sessionOf } from './headers';

const DEFAULT_QUERY = `# Svc API explorer: write a query, press Ctrl+Enter (⌘+Enter) to run it.
# Requests carry the admin secret; set X-Svc-Role and X-Svc-* session variables
# in Headers below to run them as another role.
query {
  __typename
}
`;

function ExplainIcon() {
  return (
    <svg viewBox="0 0 24 24" width="1em" height="1em" fill="none" stroke="currentColor" strokeWidth="1.5" aria-hidden="true">
      <path d="M4 5h16M4 10h10M4 15h16M4 20h8" strokeLinecap="round" />
    </svg>
  );
}

function ExplainPanel() {
  const [query] = useOperationsEditorState();
  const [variables] = useVariablesEditorState();
  const [headers] = useHeadersEditorState();
  const [plans, setPlans] = useState<ExplainPlan[]>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const vars = parseJsonObject(variables, 'variables');
      const user = sessionOf(parseJsonObject(headers, 'headers'));
      const r = await explain({ query, variables: vars }, user);
      setPlans(Array.isArray(r) ? r : [r]);
    } catch (e) {
      setPlans(undefined);
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="explain" aria-labelledby="explain-title">
      <div className="graphiql-doc-explorer-title" id="explain-title">Explain</div>
      <p>The SQL and PostgreSQL plan of each root field of the current operation, for the role and session variables in Headers.</p>
      <div>
        <button type="button" className="primary" onClick={run} disabled={busy}>
          {busy ? 'Explaining…' : 'Explain the current query'}
        </button>
      </div>
      {error && <p className="error" role="alert">{error}</p>}
      {plans?.map((p, i) => (
        <div key={i}>
          <h3>{p.field}</h3>
          <pre className="json" tabIndex={0} aria-label={`SQL of ${p.field}`}>{p.sql}</pre>
          <pre className="json" tabIndex={0} aria-label={`plan of ${p.field}`}>{(p.plan ?? []).join('\n')}</pre>
        </div>
      ))}
    </section>
  );
}

const EXPLAIN_PLUGIN: GraphiQLPlugin = { title: 'Explain', icon: ExplainIcon, content: ExplainPanel };
const EXPLORER_PLUGIN = explorerPlugin({ showAttribution: false });
const PLUGINS = [HISTORY_PLUGIN, EXPLORER_PLUGIN, EXPLAIN_PLUGIN];

export default function GraphiQLView() {
  const [sendSecret, setSendSecret] = useState(true);
  const secretRef = useRef(sendSecret);
  secretRef.current = sendSecret;
  const fetcher = useRef((params: FetchParams, opts?: { headers?: Record<string, unknown> }) => {
    const headers = requestHeaders(opts?.headers, secretRef.current);
    return isSubscription(params.query, params.operationName) ? subscribe(params, headers) : postGraphql(params, headers);
  }).current;
  return (
    <>
      <div className="inline explorer-options">
        <input id="send-secret" type="checkbox" checked={sendSecret} onChange={(e) => setSendSecret(e.target.checked)} />
        <label htmlFor="send-secret">Send the admin secret with requests (turn off to try JWT or webhook credentials in Headers)</label>
      </div>
      <GraphiQL
        fetcher={fetcher as never}
        plugins={PLUGINS}
        defaultQuery={DEFAULT_QUERY}
        defaultHeaders={'{\n  "X-Svc-Role": "admin"\n}'}
        defaultEditorToolsVisibility="headers"
        shouldPersistHeaders={false}
      />
    </>
  );
}
