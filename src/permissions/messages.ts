/**
 * The messages of permission errors, in one place, worded as upstream v1.3
 * words them (Hasura/RQL/DML/Internal.hs `assertAskPermInfo`,
 * `checkPermOnCol`, `fetchRelDet`, `validateHeaders`; RQL/DML/Insert.hs,
 * RQL/DML/Update.hs). Both endpoints use them: /v1/query's DML and the
 * GraphQL parsers (through permissions/view.ts).
 */
import { SvcError } from '../errors.js';
import type { QualifiedTable } from '../model/metadata.js';
import { ADMIN_ROLE } from '../core/session.js';

/** A table as upstream names it in messages: `"name"`, or `"schema.name"` outside public. */
export const tableDisplay = (t: QualifiedTable): string => JSON.stringify(t.schema === 'public' ? t.name : `${t.schema}.${t.name}`);

const q = (s: string): string => JSON.stringify(s);
export const permissionDenied = (message: string, path: string): SvcError => new SvcError(400, 'permission-denied', message, path);

export type PermType = 'select' | 'insert' | 'update' | 'delete';

/** The role has no `op` permission on the table: `select on "t" for role "r" is not allowed. <suffix>` */
export const operationNotAllowed = (op: PermType, table: QualifiedTable, role: string, path: string, suffix = '') =>
  permissionDenied(`${op} on ${tableDisplay(table)} for role ${q(role)} is not allowed. ${suffix}`, path);

/** The suffixes upstream appends when a mutation needs select permission. */
export const SELECT_NEEDED = {
  returning: '; "returning" can only be used if the role has "select" permission on the table',
  where: (op: 'update' | 'delete') =>
    `; ${q(op)} is only allowed if the role has "select" permission as "where" can't be used without "select" permission on the table`,
  count: '; "count" is only allowed if the role has "select" permissions on the table',
};

/**
 * A column the role may not use for `op` (`checkPermOnCol`): for admin it
 * does not exist at all.
 */
export const columnNotAllowed = (op: PermType, role: string, column: string, path: string) =>
  permissionDenied(
    role === ADMIN_ROLE ? `no such column exists : ${q(column)}` : `role ${q(role)} does not have permission to ${op} column ${q(column)}`,
    path,
  );

export const computedFieldNotAllowed = (role: string, field: string, path: string) =>
  permissionDenied(`role ${q(role)} does not have permission to select computed field ${q(field)}`, path);

export const relationshipNotReadable = (role: string, rel: string, target: QualifiedTable, path: string) =>
  permissionDenied(`role ${q(role)} does not have permission to read relationship ${q(rel)}; no permission on table ${tableDisplay(target)}`, path);

export const aggregationNotAllowed = (role: string, table: QualifiedTable, path: string) =>
  permissionDenied(`role ${q(role)} does not have permission to aggregate table ${tableDisplay(table)}`, path);

/** A column the permission presets (`not-supported`). */
export const presetNotInsertable = (column: string, role: string, path: string) =>
  new SvcError(400, 'not-supported', `column ${q(column)} is not insertable for role ${q(role)}`, path);
export const presetNotUpdatable = (column: string, role: string, path: string) =>
  new SvcError(400, 'not-supported', `column ${q(column)} is not updatable for role ${q(role)}; its value is predefined in permission`, path);

/** on_conflict without update permission (RQL/DML/Insert.hs `convInsertQuery`). */
export const upsertNotAllowed = (role: string, path: string) =>
  permissionDenied(`upsert is not allowed for role ${q(role)} since update permissions are not defined`, path);
/** an inserted column the update permission of an upsert does not cover (`validateInpCols`). */
export const columnNotUpdatable = (column: string, path: string) => new SvcError(400, 'validation-failed', `column ${q(column)} is not updatable`, path);

/** A boolean expression's operator nobody knows (RQL/GBoolExp.hs: the name as given, unquoted). */
export const unknownOperator = (op: string, path: string) => new SvcError(400, 'unexpected-payload', `Unknown operator : ${op}`, path);

/** A session variable the permission needs but the request lacks (`validateHeaders`). */
export const sessionVariableNotFound = (name: string) => new SvcError(400, 'not-found', `${q(name)} header is expected but not found`, '$');
