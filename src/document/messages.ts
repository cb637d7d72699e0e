/**
 * The messages of errors about metadata objects and the database objects
 * they stand on — not found, already there, in use — in one place, worded as
 * upstream v1.3 words them (Hasura/RQL/Types.hs `askTabInfo`,
 * `askPGColInfo`, `askFieldInfo`; RQL/DDL/Permission/Internal.hs
 * `askPermInfo`, `assertPermDefined`; RQL/DDL/Schema/Table.hs;
 * RQL/DDL/Relationship.hs; RQL/DDL/Deps.hs `reportDeps`).
 */
import { SvcError } from '../errors.js';
import { displayName, type QualifiedTable } from '../model/metadata.js';

const q = (s: string): string => JSON.stringify(s);
/** `"name"`, or `"schema.name"` outside public */
const qt = (t: QualifiedTable): string => q(displayName(t));

export const notExists = (message: string, path: string): SvcError => new SvcError(400, 'not-exists', message, path);
export const alreadyExists = (message: string, path: string): SvcError => new SvcError(400, 'already-exists', message, path);

// ---- tables and columns ---------------------------------------------------------------------

/** A table Svc does not track (`askTabInfo`). */
export const tableNotExists = (t: QualifiedTable, path: string) => notExists(`table ${qt(t)} does not exist`, path);
/** A field (column, relationship, computed field) a boolean expression names that the table lacks (`askFieldInfo`). */
export const fieldNotExists = (name: string, path: string) => notExists(`${q(name)} does not exist`, path);
/** A column a request names that the table lacks (`askPGColInfo`). */
export const columnNotExists = (column: string, path: string) => notExists(`column ${q(column)} does not exist`, path);
/** A relationship named where a column is expected (`askPGColInfo`); `why` is the operation's reason. */
export const notAColumn = (name: string, why: string, path: string) =>
  new SvcError(400, 'unexpected-payload', `expecting a postgres column; but, ${q(name)} is a relationship; ${why}`, path);
export const tableNotInPostgres = (t: QualifiedTable, path: string) => notExists(`no such table/view exists in postgres : ${qt(t)}`, path);
export const tableAlreadyTracked = (t: QualifiedTable, path: string) => new SvcError(400, 'already-tracked', `view/table already tracked : ${qt(t)}`, path);
export const tableAlreadyUntracked = (t: QualifiedTable, path: string) =>
  new SvcError(400, 'already-untracked', `view/table already untracked : ${qt(t)}`, path);

// ---- fields of tables --------------------------------------------------------------------------

export const relationshipNotExists = (name: string, path: string) => notExists(`relationship ${q(name)} does not exist`, path);
export const fieldAlreadyExists = (name: string, t: QualifiedTable, path: string) =>
  alreadyExists(`column/relationship ${q(name)} of table ${qt(t)} already exists`, path);
export const computedFieldNotExists = (name: string, path: string) => notExists(`computed field ${q(name)} does not exist`, path);

// ---- permissions ---------------------------------------------------------------------------------

/** drop_*_permission of a permission that is not there (`askPermInfo`: `permission-denied`). */
export const permissionNotExists = (kind: string, t: QualifiedTable, role: string, path: string) =>
  new SvcError(400, 'permission-denied', `${kind} permission on ${qt(t)} for role ${q(role)} does not exist`, path);
/** set_permission_comment of a permission that is not there (`assertPermDefined`). */
export const permissionNotDefined = (kind: string, t: QualifiedTable, role: string, path: string) =>
  new SvcError(400, 'permission-denied', `'${kind}' permission on ${qt(t)} for role ${q(role)} does not exist`, path);
export const permissionAlreadyDefined = (kind: string, t: QualifiedTable, role: string, path: string) =>
  alreadyExists(`${kind} permission already defined on table ${qt(t)} with role ${q(role)}`, path);

// ---- dependencies (Deps.hs) --------------------------------------------------------------------

export const dependentObjects = (names: string[], path: string) =>
  new SvcError(400, 'dependency-error', `cannot drop due to the following dependent objects : ${names.join(', ')}`, path);
export const columnTypeDependencies = (column: string, t: QualifiedTable, names: string[], path: string) =>
  new SvcError(
    400,
    'dependency-error',
    `cannot change type of column ${q(column)} in table ${qt(t)} because of the following dependencies : ${names.join(', ')}`,
    path,
  );
