/** API explorer: GraphiQL against /v1/graphql (the editor is loaded on demand). */
import { lazy, Suspense } from 'react';
import type { PageMeta } from '../pages';
import { useTitle } from '../router';
import { Loading } from '../ui';

export const meta: PageMeta = {
  path: 'api-explorer',
  title: 'API explorer',
  order: 10,
  description: 'GraphiQL: run queries, mutations and subscriptions; docs, history, explain',
};

const GraphiQLView = lazy(() => import('../graphiql/GraphiQLView'));

export default function ApiExplorerPage() {
  useTitle(meta.title);
  return (
    <div className="explorer">
      <h1 id="page-title" tabIndex={-1} className="sr-only">API explorer</h1>
      <Suspense fallback={<Loading what="the GraphiQL editor" />}>
        <GraphiQLView />
      </Suspense>
    </div>
  );
}
