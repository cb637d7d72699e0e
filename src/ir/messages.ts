/**
 * The messages of GraphQL validation errors (`validation-failed`) and of
 * scalar values that do not parse (`parse-failed`), in one place, worded as
 * upstream v1.3 words them:
 *
 * - Hasura/GraphQL/Validate.hs (operation, variables),
 * - Hasura/GraphQL/Validate/Context.hs (fields and types not found),
 * - Hasura/GraphQL/Validate/SelectionSet.hs (selection sets, arguments,
 *   fragments, directives, field merging),
 * - Hasura/GraphQL/Validate/InputValue.hs (input values, variables' values).
 *
 * Upstream's helpers: `showName n` = `"n"`, `showNames` joins them with
 * ", ", `showNamedTy t` = `'t'`, `showGT` prints a type as `[Int!]!`.
 */
import { SvcError } from '../errors.js';

export const showName = (n: string): string => `"${n}"`;
export const showNames = (ns: readonly string[]): string => ns.map(showName).join(', ');
export const showNamedTy = (t: string): string => `'${t}'`;

export const validationError = (message: string, path: string): SvcError => new SvcError(400, 'validation-failed', message, path);
/** A scalar value that does not parse as its type (upstream's `runAesonParser`: `parse-failed`). */
export const parseError = (message: string, path: string): SvcError => new SvcError(400, 'parse-failed', message, path);

// ---- the operation (Validate.hs) -----------------------------------------------------

export const noSuchOperation = (name: string) => validationError(`no such operation found in the document: ${showName(name)}`, '$');
export const operationNameWithAnonymous = () => validationError('operationName cannot be used when an anonymous operation exists in the document', '$');
export const exactlyOneOperation = () => validationError('exactly one operation has to be present in the document when operationName is not specified', '$');
export const noMutations = () => validationError('no mutations exist', '$');
export const noSubscriptions = () => validationError('no subscriptions exist', '$');

// ---- variables (Validate.hs getAnnVarVals, InputValue.hs) ---------------------------------

const VARIABLES = '$.variableValues';

export const variablesDefinedMoreThanOnce = (names: string[]) =>
  validationError(`the following variables are defined more than once: ${showNames(names)}`, VARIABLES);
export const unexpectedVariables = (names: string[]) => validationError(`unexpected variables in variableValues: ${showNames(names)}`, VARIABLES);
export const noSuchType = (type: string, path: string) => validationError(`no such type exists in the schema: ${showNamedTy(type)}`, path);
export const variableOfObjectType = (type: string) =>
  validationError(`variables can only be defined on input types(enums, scalars, input objects), but ${showNamedTy(type)} is an object type`, VARIABLES);
export const missingVariable = (name: string, type: string) =>
  validationError(`expecting a value for non-nullable variable: ${showName(name)} of type: ${type} in variableValues`, VARIABLES);
export const noSuchVariable = (name: string, path: string) => validationError(`no such variable defined in the operation: ${showName(name)}`, path);
/** A variable used where its declared type is not allowed (`a` at `a!`, a list at a scalar, ...). */
export const variableTypeMismatch = (name: string, declared: string, expected: string, path: string) =>
  validationError(`variable ${name} of type ${declared} is used in position expecting ${expected}`, path);

// ---- selection sets (Context.hs, SelectionSet.hs) ------------------------------------------

export const fieldNotFound = (field: string, type: string, path: string) =>
  validationError(`field ${showName(field)} not found in type: ${showNamedTy(type)}`, path);
export const mustHaveSelection = (field: string, type: string, path: string) =>
  validationError(`field ${showName(field)} of type ${type} must have a selection of subfields`, path);
export const mustNotHaveSelection = (field: string, type: string, path: string) =>
  validationError(`field ${showName(field)} must not have a selection since type ${type} has no subfields`, path);
export const mergeDifferentFields = (alias: string, names: string[], path: string) =>
  validationError(`cannot merge different fields under the same alias (${showName(alias)}): ${showNames(names)}`, path);
export const mergeDifferentArguments = (alias: string, path: string) =>
  validationError(`cannot merge fields with different arguments under the same alias: ${showName(alias)}`, path);
export const argumentsDefinedMoreThanOnce = (names: string[], path: string) =>
  validationError(`the following arguments are defined more than once: ${showNames(names)}`, path);
export const noSuchArgument = (name: string, path: string) => validationError(`no such argument ${showName(name)} is expected`, path);
export const requiredArgumentMissing = (name: string, path: string) => validationError(`the required argument ${showName(name)} is missing`, path);

export const fragmentNotFound = (name: string, path: string) => validationError(`fragment '${name}' not found`, path);
export const fragmentCycle = (name: string, visited: string[], path: string) =>
  validationError(`cannot spread fragment ${showName(name)} within itself via ${visited.join(',')}`, path);
/** upstream's wording, with its two spaces (the fragment's name was left out: "TODO: fragment source") */
export const fragmentSpreadMismatch = (fragmentType: string, parentType: string, path: string) =>
  validationError(`cannot spread fragment  defined on ${showNamedTy(fragmentType)} when selecting fields of type ${showNamedTy(parentType)}`, path);
export const fragmentsOnlyOnComposite = (path: string) => validationError('fragments can only be defined on object/interface/union types', path);
export const fragmentsDefinedMoreThanOnce = (names: string[]) =>
  validationError(`the following fragments are defined more than once: ${showNames(names)}`, '$');

export const directivesUsedMoreThanOnce = (names: string[], path: string) =>
  validationError(`the following directives are used more than once: ${showNames(names)}`, path);
export const unexpectedDirective = (name: string, path: string) => validationError(`unexpected directive: ${showName(name)}`, path);

// ---- input values (InputValue.hs) ---------------------------------------------------------

/**
 * A scalar value that does not fit its type, a variable's or a literal's (the one builder for every
 * scalar): aeson's `expected Int32, encountered String`, with the refused text when a string was
 * given in the wrong format (`expected UUID, encountered String "abc"`; at most 100 characters).
 */
export const scalarMismatch = (expected: string, found: string, path: string, text?: string) =>
  validationError(
    `expected ${expected}, encountered ${found}${text === undefined ? '' : ` ${JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text)}`}`,
    path,
  );
export const nullForNonNullable = (type: string, path: string) => validationError(`null value found for non-nullable type: ${type}`, path);
/** a literal where an input object is expected */
export const expectingObject = (path: string) => validationError('expecting an object', path);
/** a variable's (JSON) value where an input object is expected */
export const expectingJsonObject = (path: string) => validationError('expecting a JSON object', path);
/** a literal where an enum is expected */
export const expectingEnum = (path: string) => validationError('expecting an enum', path);
/** a variable's (JSON) value where an enum is expected */
export const expectingJsonEnum = (path: string) => validationError('expecting a JSON string for Enum', path);
export const unexpectedEnumValue = (value: string, enumType: string, path: string) =>
  validationError(`unexpected value ${showName(value)} for enum: ${showNamedTy(enumType)}`, path);
export const unexpectedEnumForScalar = (path: string) => validationError('unexpected enum for a scalar', path);
export const requiredInputField = (field: string, type: string, path: string) =>
  validationError(`field ${field} of type ${type} is required, but not found`, path);
export const duplicatedInputFields = (type: string, names: string[], path: string) =>
  validationError(`when parsing a value of type: ${showNamedTy(type)}, the following fields are duplicated: ${showNames(names)}`, path);
