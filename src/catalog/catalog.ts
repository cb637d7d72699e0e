/**
 * The `svc_catalog` schema: created once (in one transaction, under an
 * advisory lock, so instances starting together create it exactly once) and
 * versioned. The metadata document is one row with a resource_version that
 * every change bumps; other instances learn of changes by NOTIFY and by
 * comparing the version.
 */
import type { Conn, Db, Queryable } from '../db/db.js';
import { SvcError } from '../errors.js';
import { normalizeMetadata } from '../metadata/export.js';
import { emptyMetadata, type Metadata } from '../metadata/types.js';

export const CATALOG_VERSION = '1';
export const METADATA_CHANNEL = 'svc_metadata_changed';
const LOCK_KEY = 8_271_000_001; // advisory lock guarding catalog creation/migration

const DDL = `
create schema if not exists svc_catalog;
create table svc_catalog.svc_version (
  one boolean primary key default true check (one),
  version text not null,
  upgraded_on timestamptz not null default now()
);
create table svc_catalog.svc_metadata (
  id int primary key default 1 check (id = 1),
  metadata json not null,
  resource_version bigint not null default 1
);
create table svc_catalog.event_log (
  id uuid primary key,
  schema_name text not null,
  table_name text not null,
  trigger_name text not null,
  payload jsonb not null,
  delivered boolean not null default false,
  error boolean not null default false,
  tries int not null default 0,
  created_at timestamptz not null default now(),
  locked timestamptz,
  next_retry_at timestamptz,
  archived boolean not null default false
);
create index event_log_trigger_idx on svc_catalog.event_log (trigger_name);
create index event_log_pending_idx on svc_catalog.event_log (created_at) where not delivered and not error and not archived;
create table svc_catalog.event_invocation_logs (
  id uuid primary key,
  event_id uuid references svc_catalog.event_log (id) on delete cascade,
  status int,
  request json,
  response json,
  created_at timestamptz not null default now()
);
create index event_invocation_logs_event_idx on svc_catalog.event_invocation_logs (event_id);
`;

export async function initCatalog(db: Db): Promise<void> {
  await db.tx(async (c) => {
    await c.query('select pg_advisory_xact_lock($1)', [LOCK_KEY]);
    const exists = await c.query(`select to_regclass('svc_catalog.svc_version') is not null as e`);
    if (exists.rows[0].e === 't' || exists.rows[0].e === true) {
      const v = await c.query('select version from svc_catalog.svc_version');
      const version = v.rows[0]?.version as string | undefined;
      if (version !== CATALOG_VERSION) {
        throw new SvcError(400, 'not-supported', `unsupported version : ${version ?? 'unknown'}`);
      }
      return;
    }
    for (const stmt of DDL.split(';').map((s) => s.trim()).filter(Boolean)) await c.query(stmt);
    await c.query('insert into svc_catalog.svc_version (version) values ($1)', [CATALOG_VERSION]);
    await c.query('insert into svc_catalog.svc_metadata (metadata) values ($1)', [JSON.stringify(emptyMetadata())]);
  });
}

export interface StoredMetadata {
  metadata: Metadata;
  resourceVersion: number;
}

export async function loadMetadata(q: Queryable): Promise<StoredMetadata> {
  const r = await q.query('select metadata::text as m, resource_version from svc_catalog.svc_metadata where id = 1');
  const row = r.rows[0];
  return { metadata: normalizeMetadata(JSON.parse(row.m)), resourceVersion: Number(row.resource_version) };
}

export async function loadResourceVersion(q: Queryable): Promise<number> {
  const r = await q.query('select resource_version from svc_catalog.svc_metadata where id = 1');
  return Number(r.rows[0].resource_version);
}

/** Lock the metadata row for the rest of the transaction and return the stored version. */
export async function lockMetadata(c: Conn): Promise<number> {
  const r = await c.query('select resource_version from svc_catalog.svc_metadata where id = 1 for update');
  return Number(r.rows[0].resource_version);
}

export async function saveMetadata(c: Conn, md: Metadata): Promise<number> {
  const r = await c.query(
    'update svc_catalog.svc_metadata set metadata = $1, resource_version = resource_version + 1 where id = 1 returning resource_version',
    [JSON.stringify(md)],
  );
  const version = Number(r.rows[0].resource_version);
  await c.query('select pg_notify($1, $2)', [METADATA_CHANNEL, String(version)]);
  return version;
}
