/** Wires the GraphQL executor into the HTTP routes. TEMPORARY until the executor lands. */
import { SvcError } from '../errors.js';
import type { GraphQLHandlers } from './app.js';

export const graphqlHandlers: GraphQLHandlers = {
  async run() {
    throw new SvcError(400, 'not-supported', 'GraphQL execution is not available yet');
  },
  async explain() {
    throw new SvcError(400, 'not-supported', 'explain is not available yet');
  },
};
