/** A schema and a metadata with every kind of object (test/cli/metadata.test.ts). */
export const SCHEMA = `
create table author (id serial primary key, name text not null, user_id int);
create table article (id serial primary key, title text not null, author_id int not null references author (id), published boolean not null default false);
create table profiles (id int primary key, msg_id int);
create function author_full_name(a author) returns text language sql stable as $$ select a.name || '!' $$;
create function search_articles(q text) returns setof article language sql stable as $$ select * from article where title ilike '%' || q || '%' $$;
`;

export const METADATA_OPS = (remoteUrl: string) => [
  { type: 'track_table', args: { table: 'author' } },
  { type: 'track_table', args: { table: 'article' } },
  { type: 'track_table', args: { table: 'profiles' } },
  { type: 'set_table_custom_fields', args: { table: 'author', custom_root_fields: { select: 'authors' }, custom_column_names: { user_id: 'userId' } } },
  { type: 'create_object_relationship', args: { table: 'article', name: 'author', using: { foreign_key_constraint_on: 'author_id' } } },
  {
    type: 'create_array_relationship',
    args: { table: 'author', name: 'articles', using: { foreign_key_constraint_on: { table: 'article', column: 'author_id' } } },
  },
  { type: 'add_computed_field', args: { table: 'author', name: 'full_name', definition: { function: 'author_full_name' } } },
  {
    type: 'create_insert_permission',
    args: { table: 'article', role: 'user', permission: { check: { author: { user_id: { _eq: 'X-Svc-User-Id' } } }, columns: ['title', 'author_id'] } },
  },
  {
    type: 'create_select_permission',
    args: { table: 'article', role: 'user', permission: { columns: '*', filter: { published: { _eq: true } }, limit: 10, allow_aggregations: true } },
  },
  {
    type: 'create_update_permission',
    args: { table: 'article', role: 'user', permission: { columns: ['title'], filter: { author: { user_id: { _eq: 'X-Svc-User-Id' } } } } },
  },
  { type: 'create_delete_permission', args: { table: 'article', role: 'user', permission: { filter: { author: { user_id: { _eq: 'X-Svc-User-Id' } } } } } },
  {
    type: 'create_select_permission',
    args: { table: 'author', role: 'user', permission: { columns: ['id', 'name'], computed_fields: ['full_name'], filter: {} } },
  },
  { type: 'track_function', args: { schema: 'public', name: 'search_articles' } },
  {
    type: 'create_event_trigger',
    args: {
      name: 'article_created',
      table: 'article',
      webhook: 'http://127.0.0.1:9/hook',
      insert: { columns: '*' },
      update: { columns: ['title'] },
      retry_conf: { num_retries: 3, interval_sec: 10, timeout_sec: 30 },
      headers: [{ name: 'X-Key', value: 'v' }],
    },
  },
  {
    type: 'create_cron_trigger',
    args: {
      name: 'nightly',
      webhook: 'http://127.0.0.1:9/nightly',
      schedule: '0 3 * * *',
      payload: { kind: 'report' },
      include_in_metadata: true,
      comment: 'the nightly report',
    },
  },
  { type: 'create_cron_trigger', args: { name: 'not_in_metadata', webhook: 'http://127.0.0.1:9/x', schedule: '0 4 * * *', include_in_metadata: false } },
  {
    type: 'set_custom_types',
    args: {
      input_objects: [
        {
          name: 'LoginInput',
          description: 'who signs in',
          fields: [
            { name: 'username', type: 'String!' },
            { name: 'password', type: 'String!', description: 'never logged' },
          ],
        },
      ],
      objects: [
        {
          name: 'LoginOutput',
          fields: [
            { name: 'token', type: 'String!' },
            { name: 'author_id', type: 'Int' },
          ],
          relationships: [{ name: 'author', type: 'object', remote_table: 'author', field_mapping: { author_id: 'id' } }],
        },
        {
          name: 'Stats',
          description: 'multi\nline "quoted"',
          fields: [
            { name: 'count', type: 'Int!' },
            { name: 'tags', type: '[String!]' },
          ],
        },
      ],
      enums: [{ name: 'Mood', values: [{ value: 'HAPPY' }, { value: 'GRUMPY', description: 'no longer', is_deprecated: true }] }],
      scalars: [{ name: 'Timestamp', description: 'ISO 8601' }],
    },
  },
  {
    type: 'create_action',
    args: {
      name: 'login',
      definition: {
        kind: 'synchronous',
        handler: 'http://127.0.0.1:9/login',
        arguments: [{ name: 'input', type: 'LoginInput!', description: 'credentials' }],
        output_type: 'LoginOutput',
        headers: [{ name: 'X-Action', value: 'a' }],
        forward_client_headers: true,
        timeout: 5,
      },
      comment: 'sign in',
    },
  },
  {
    type: 'create_action',
    args: {
      name: 'stats',
      definition: {
        type: 'query',
        handler: 'http://127.0.0.1:9/stats',
        arguments: [
          { name: 'since', type: 'Timestamp' },
          { name: 'mood', type: 'Mood' },
        ],
        output_type: '[Stats!]!',
      },
    },
  },
  { type: 'create_action', args: { name: 'export_all', definition: { kind: 'asynchronous', handler: 'http://127.0.0.1:9/export', output_type: 'Stats' } } },
  { type: 'create_action_permission', args: { action: 'login', role: 'user' } },
  { type: 'add_inherited_role', args: { role_name: 'user_and_editor', role_set: ['user', 'editor'] } },
  {
    type: 'add_remote_schema',
    args: { name: 'msgs', definition: { url: remoteUrl, forward_client_headers: false, timeout_seconds: 20 }, comment: 'messages' },
  },
  {
    type: 'create_remote_relationship',
    args: { name: 'message', table: 'profiles', svc_fields: ['msg_id'], remote_schema: 'msgs', remote_field: { message: { arguments: { id: '$msg_id' } } } },
  },
  {
    type: 'create_query_collection',
    args: { name: 'app', definition: { queries: [{ name: 'articles', query: 'query articles {\n  article { id title }\n}' }] } },
  },
  { type: 'add_collection_to_allowlist', args: { collection: 'app' } },
];
