/** track_table (v1, v2), untrack_table, set_table_is_enum, set_table_custom_fields. */
import { SvcError } from '../../errors.js';
import { tableAlreadyTracked, tableAlreadyUntracked, tableNotExists, tableNotInPostgres } from '../../document/messages.js';
import { dropDependents } from '../../schema/dependencies.js';
import { SUCCESS, defineOp, type OpContext } from '../registry.js';
import { reader, expectBool, expectObject, expectText, parseQualified, type ArgReader } from '../../document/args.js';
import { checkRemoteRootConflict } from '../../remote/cache.js';
import { qualifiedGqlName } from '../../schema/graphql/names.js';
import { displayName, emptyTable, sameName, type QualifiedTable, type TableConfiguration, type TableMetadata } from '../../model/metadata.js';

export function findTable(ctx: OpContext, table: QualifiedTable, path = ctx.path): TableMetadata {
  const t = ctx.state.metadata.tables.find((x) => sameName(x.table, table));
  if (!t) throw tableNotExists(table, path);
  return t;
}

const ROOT_FIELD_KEYS = ['select', 'select_by_pk', 'select_aggregate', 'insert', 'insert_one', 'update', 'update_by_pk', 'delete', 'delete_by_pk'];

function parseConfiguration(v: unknown, path: string): TableConfiguration {
  if (v === undefined || v === null) return {};
  const o = expectObject(v, path);
  const out: TableConfiguration = {};
  if (o.custom_root_fields !== undefined && o.custom_root_fields !== null) {
    const rf = expectObject(o.custom_root_fields, `${path}.custom_root_fields`);
    for (const [k, val] of Object.entries(rf)) {
      if (!ROOT_FIELD_KEYS.includes(k)) throw new SvcError(400, 'parse-failed', `unexpected key ${JSON.stringify(k)}`, `${path}.custom_root_fields`);
      if (val !== null) expectText(val, `${path}.custom_root_fields.${k}`);
      if (typeof val === 'string' && !/^[_A-Za-z][_0-9A-Za-z]*$/.test(val)) {
        throw new SvcError(400, 'parse-failed', `${JSON.stringify(val)} is not a valid GraphQL name`, `${path}.custom_root_fields.${k}`);
      }
    }
    out.custom_root_fields = Object.fromEntries(Object.entries(rf).filter(([, x]) => x !== null)) as TableConfiguration['custom_root_fields'];
    // one name for two root fields of a table would make the GraphQL schema invalid
    const names = Object.values(out.custom_root_fields ?? {}) as string[];
    const duplicated = [...new Set(names.filter((n, i) => names.indexOf(n) !== i))];
    if (duplicated.length) {
      throw new SvcError(
        400,
        'parse-failed',
        `the following custom root field names are duplicated: ${duplicated.map((n) => JSON.stringify(n)).join(', ')}`,
        `${path}.custom_root_fields`,
      );
    }
  }
  if (o.custom_column_names !== undefined && o.custom_column_names !== null) {
    const cn = expectObject(o.custom_column_names, `${path}.custom_column_names`);
    for (const [k, val] of Object.entries(cn)) {
      if (typeof val !== 'string' || !/^[_A-Za-z][_0-9A-Za-z]*$/.test(val)) {
        throw new SvcError(400, 'parse-failed', `${JSON.stringify(val)} is not a valid GraphQL name`, `${path}.custom_column_names.${k}`);
      }
    }
    out.custom_column_names = cn as Record<string, string>;
  }
  return out;
}

function checkNameClash(ctx: OpContext, table: QualifiedTable): void {
  if (ctx.state.metadata.functions.some((f) => sameName(f.function, table))) {
    throw new SvcError(400, 'not-supported', `function with name ${JSON.stringify(displayName(table))} already exists`, ctx.path);
  }
}

function track(ctx: OpContext, table: QualifiedTable, isEnum: boolean, configuration: TableConfiguration): typeof SUCCESS {
  if (ctx.state.metadata.tables.some((x) => sameName(x.table, table))) {
    throw tableAlreadyTracked(table, ctx.path);
  }
  if (!ctx.state.cache.db.tables.has(`${table.schema}.${table.name}`)) {
    throw tableNotInPostgres(table, ctx.path);
  }
  checkNameClash(ctx, table);
  checkRemoteRootConflict(ctx.state.cache, qualifiedGqlName(table), ctx.path);
  const t = emptyTable(table);
  if (isEnum) t.is_enum = true;
  if (configuration.custom_root_fields || configuration.custom_column_names) t.configuration = configuration;
  ctx.state.metadata.tables.push(t);
  return SUCCESS;
}

/** `{table, is_enum?, configuration?}`: the v2 form, also accepted by v1. */
function trackWithTableKey(ctx: OpContext, args: unknown) {
  const a = reader(args);
  const table = a.table();
  const isEnum = a.bool('is_enum', false);
  const configuration = parseConfiguration(a.raw('configuration'), a.sub('configuration'));
  a.done();
  return track(ctx, table, isEnum, configuration);
}

/** v1 accepts a bare table name, `{schema, name, is_enum}` or `{table, is_enum}`. */
function trackV1(ctx: OpContext, args: unknown) {
  if (typeof args === 'string') return track(ctx, parseQualified(args, '$'), false, {});
  const o = expectObject(args, '$');
  if ('table' in o) return trackWithTableKey(ctx, args);
  const table = parseQualified({ schema: o.schema, name: o.name }, '$');
  return track(ctx, table, o.is_enum === true, {});
}

defineOp('track_table', {
  kind: 'metadata',
  async run(ctx, args, version) {
    return version === 1 ? trackV1(ctx, args) : trackWithTableKey(ctx, args);
  },
});

defineOp('untrack_table', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const table = a.table();
    const cascade = a.bool('cascade', false);
    a.done();
    const md = ctx.state.metadata;
    if (!md.tables.some((x) => sameName(x.table, table))) {
      throw tableAlreadyUntracked(table, ctx.path);
    }
    dropDependents(md, ctx.state.cache, [{ kind: 'table', table }], cascade, ctx.path, [table]);
    md.tables = md.tables.filter((x) => !sameName(x.table, table));
    // functions returning this table cannot stay tracked
    md.functions = md.functions.filter((f) => {
      const fm = ctx.state.cache.functions.get(`${f.function.schema}.${f.function.name}`);
      return !fm || !sameName(fm.returnTable, table);
    });
    return SUCCESS;
  },
});

defineOp('set_table_is_enum', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const table = a.table();
    const isEnum = a.bool('is_enum', false);
    expectBool(a.required('is_enum'), a.sub('is_enum'));
    a.done();
    const t = findTable(ctx, table);
    if (isEnum) t.is_enum = true;
    else delete t.is_enum;
    return SUCCESS;
  },
});

function setCustomFields(ctx: OpContext, a: ArgReader) {
  const table = a.table();
  const configuration = parseConfiguration({ custom_root_fields: a.raw('custom_root_fields'), custom_column_names: a.raw('custom_column_names') }, '$');
  a.done();
  const t = findTable(ctx, table);
  const cfg: TableConfiguration = { custom_root_fields: configuration.custom_root_fields ?? {}, custom_column_names: configuration.custom_column_names ?? {} };
  t.configuration = cfg;
  return SUCCESS;
}

defineOp('set_table_custom_fields', {
  kind: 'metadata',
  async run(ctx, args) {
    return setCustomFields(ctx, reader(args));
  },
});
