/**
 * The `svc_catalog` schema: created once (in one transaction, under an
 * advisory lock, so instances starting together create it exactly once) and
 * versioned. The metadata document is one row with a resource_version that
 * every change bumps; other instances learn of changes by NOTIFY and by
 * comparing the version.
 */
import type { Conn, Db, Queryable } from '../db/db.js';
import { SvcError } from '../errors.js';
import { normalizeMetadata } from '../document/export.js';
import { emptyMetadata, type Metadata } from '../model/metadata.js';

export const CATALOG_VERSION = '4';
export const METADATA_CHANNEL = 'svc_metadata_changed';
const LOCK_KEY = 8_271_000_001; // advisory lock guarding catalog creation/migration

export const CATALOG_V1_DDL = `
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

/**
 * Migrations from catalog version N to N+1 (index N-1), run in order in the creating transaction
 * under the advisory lock. A fresh catalog is version 1's DDL plus every migration.
 */
const MIGRATIONS: string[] = [
  // 1 → 2: the delivery subsystem. The user-visible columns of reference/catalog-tables.md (text
  // ids, `locked` boolean) plus a lease the engine owns (locked_by, locked_until), and the tables of
  // scheduled triggers and async actions.
  `
alter table svc_catalog.event_invocation_logs drop constraint if exists event_invocation_logs_event_id_fkey;
alter table svc_catalog.event_log alter column id type text using id::text;
alter table svc_catalog.event_log alter column id set default gen_random_uuid()::text;
alter table svc_catalog.event_log alter column locked type boolean using locked is not null;
alter table svc_catalog.event_log alter column locked set default false;
update svc_catalog.event_log set locked = false where locked is null;
alter table svc_catalog.event_log alter column locked set not null;
alter table svc_catalog.event_log add column locked_by text;
alter table svc_catalog.event_log add column locked_until timestamptz;
create index event_log_locked_idx on svc_catalog.event_log (locked);
create index event_log_delivered_idx on svc_catalog.event_log (delivered);
create index event_log_created_at_idx on svc_catalog.event_log (created_at);
alter table svc_catalog.event_invocation_logs alter column id type text using id::text;
alter table svc_catalog.event_invocation_logs alter column id set default gen_random_uuid()::text;
alter table svc_catalog.event_invocation_logs alter column event_id type text using event_id::text;
alter table svc_catalog.event_invocation_logs add constraint event_invocation_logs_event_id_fkey foreign key (event_id) references svc_catalog.event_log (id) on delete cascade;
create table svc_catalog.hdb_cron_triggers (
  name text primary key,
  webhook_conf json not null,
  cron_schedule text not null,
  payload json,
  retry_conf json,
  header_conf json,
  include_in_metadata boolean not null default false,
  comment text
);
create table svc_catalog.hdb_cron_events (
  id text primary key default gen_random_uuid()::text,
  trigger_name text not null references svc_catalog.hdb_cron_triggers (name) on update cascade on delete cascade,
  scheduled_time timestamptz not null,
  status text not null default 'scheduled' check (status in ('scheduled', 'locked', 'delivered', 'error', 'dead')),
  tries integer not null default 0,
  created_at timestamp default now(),
  next_retry_at timestamptz,
  locked_by text,
  locked_until timestamptz,
  unique (trigger_name, scheduled_time)
);
create index hdb_cron_events_status_idx on svc_catalog.hdb_cron_events (status);
create table svc_catalog.hdb_cron_event_invocation_logs (
  id text primary key default gen_random_uuid()::text,
  event_id text references svc_catalog.hdb_cron_events (id) on update cascade on delete cascade,
  status integer,
  request json,
  response json,
  created_at timestamptz default now()
);
create index hdb_cron_event_invocation_logs_event_idx on svc_catalog.hdb_cron_event_invocation_logs (event_id);
create table svc_catalog.hdb_scheduled_events (
  id text primary key default gen_random_uuid()::text,
  webhook_conf json not null,
  scheduled_time timestamptz not null,
  retry_conf json,
  payload json,
  header_conf json,
  status text not null default 'scheduled' check (status in ('scheduled', 'locked', 'delivered', 'error', 'dead')),
  tries integer not null default 0,
  created_at timestamp default now(),
  next_retry_at timestamptz,
  comment text,
  locked_by text,
  locked_until timestamptz
);
create index hdb_scheduled_events_status_idx on svc_catalog.hdb_scheduled_events (status);
create table svc_catalog.hdb_scheduled_event_invocation_logs (
  id text primary key default gen_random_uuid()::text,
  event_id text references svc_catalog.hdb_scheduled_events (id) on update cascade on delete cascade,
  status integer,
  request json,
  response json,
  created_at timestamptz default now()
);
create index hdb_scheduled_event_invocation_logs_event_idx on svc_catalog.hdb_scheduled_event_invocation_logs (event_id);
create table svc_catalog.hdb_action_log (
  id uuid primary key default gen_random_uuid(),
  action_name text,
  input_payload jsonb not null,
  request_headers jsonb not null,
  session_variables jsonb not null,
  response_payload jsonb,
  errors jsonb,
  created_at timestamptz not null default now(),
  response_received_at timestamptz,
  status text not null check (status in ('created', 'processing', 'completed', 'error')),
  locked_by text,
  locked_until timestamptz
);
`,
  // 2 → 3: a generation per remote schema, bumped by add_remote_schema, reload_remote_schema and
  // reload_metadata {reload_remote_schemas}: every instance refetches a remote whose generation
  // differs from the one it fetched (src/remote/introspect.ts), as it rebuilds on the NOTIFY.
  `
create table svc_catalog.remote_schema_generations (
  name text primary key,
  generation bigint not null
);
`,
  // 3 → 4: the W3C traceparent of the request whose write created an event (issue 35), read by the
  // column's default from the transaction's \`svc.traceparent\`, which a mutation sets only while
  // tracing is on (null otherwise); the delivery tries' spans are linked to it. The column is added
  // without a default first (no table rewrite), then given one (for new rows only). One-off
  // scheduled events and async actions get the column too, written by their inserts.
  `
alter table svc_catalog.event_log add column trace_context text;
alter table svc_catalog.event_log alter column trace_context set default nullif(current_setting('svc.traceparent', true), '');
alter table svc_catalog.hdb_scheduled_events add column trace_context text;
alter table svc_catalog.hdb_action_log add column trace_context text;
`,
];

const statements = (sql: string) =>
  sql
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);

export async function initCatalog(db: Db): Promise<void> {
  await db.tx(async (c) => {
    await c.query('select pg_advisory_xact_lock($1)', [LOCK_KEY]);
    const exists = await c.query(`select to_regclass('svc_catalog.svc_version') is not null as e`);
    if (exists.rows[0].e === 't' || exists.rows[0].e === true) {
      const v = await c.query('select version from svc_catalog.svc_version');
      const version = v.rows[0]?.version as string | undefined;
      const n = Number(version);
      if (version === CATALOG_VERSION) return;
      if (!/^\d+$/.test(version ?? '') || n < 1 || n > Number(CATALOG_VERSION)) {
        throw new SvcError(400, 'not-supported', `unsupported version : ${version ?? 'unknown'}`);
      }
      for (const m of MIGRATIONS.slice(n - 1)) for (const stmt of statements(m)) await c.query(stmt);
      await c.query('update svc_catalog.svc_version set version = $1, upgraded_on = now()', [CATALOG_VERSION]);
      return;
    }
    for (const stmt of statements(CATALOG_V1_DDL)) await c.query(stmt);
    for (const m of MIGRATIONS) for (const stmt of statements(m)) await c.query(stmt);
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
