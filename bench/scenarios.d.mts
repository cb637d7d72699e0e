// Types of scenarios.mjs for the TypeScript tests that read the bench scenarios (test/bench/).
export interface Scenario {
  id: string;
  what: string;
  variables: Record<string, unknown>;
  pgVariables: Record<string, unknown>;
  headers: Record<string, string>;
  params(vars: Record<string, unknown>, headers: Record<string, string | undefined>): unknown[];
  check(data: unknown): string | null;
  fromPostgraphile(data: unknown): unknown;
  mutation?: boolean;
}
export const HERE: string;
export const USER_HEADERS: Record<string, string>;
export const INSERT_MARK: { authorId: number; ownerId: number; createdAt: string };
export const SCENARIOS: Scenario[];
export const SCENARIO_IDS: string[];
export const byId: Record<string, Scenario>;
export function loadQueries(s: Scenario): { hasura: string; postgraphile: string; sql: string };
export function diff(a: unknown, b: unknown, path?: string): string | null;
