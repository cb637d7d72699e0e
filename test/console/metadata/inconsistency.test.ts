/** Dropping one inconsistent object from the Metadata page (console/src/metadata/inconsistency.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeObject, dropOperation } from '../../../console/src/metadata/inconsistency.ts';

const table = { schema: 'public', name: 'note' };

test('each object type of get_inconsistent_metadata has its own drop operation', () => {
  assert.deepEqual(dropOperation({ type: 'table', reason: '', definition: table }), { type: 'untrack_table', args: { table, cascade: true } });
  assert.deepEqual(dropOperation({ type: 'select_permission', reason: '', definition: { table, role: 'user', permission: {} } }), {
    type: 'drop_select_permission',
    args: { table, role: 'user' },
  });
  assert.deepEqual(dropOperation({ type: 'array_relation', reason: '', definition: { table, name: 'items', using: {} } }), {
    type: 'drop_relationship',
    args: { table, relationship: 'items' },
  });
  assert.deepEqual(dropOperation({ type: 'event_trigger', reason: '', definition: { table, configuration: { name: 'note_changes' } } }), {
    type: 'delete_event_trigger',
    args: { name: 'note_changes' },
  });
  assert.deepEqual(dropOperation({ type: 'remote_schema', reason: '', definition: { name: 'r' } }), { type: 'remove_remote_schema', args: { name: 'r' } });
  assert.equal(dropOperation({ type: 'something_new', reason: '', definition: { name: 'x' } }), undefined);
  assert.equal(dropOperation({ type: 'table', reason: '', definition: null }), undefined);
});

test('names in the list', () => {
  assert.equal(describeObject({ type: 'table', reason: '', definition: { schema: 's', name: 't' } }), 's.t');
  assert.equal(describeObject({ type: 'insert_permission', reason: '', definition: { table, role: 'user' } }), 'public.note · user');
  assert.equal(describeObject({ type: 'object_relation', reason: '', definition: { table: 'note', name: 'owner' } }), 'note · owner');
  assert.equal(
    describeObject({ type: 'event_trigger', reason: '', definition: { table, configuration: { name: 'note_changes', definition: {} } } }),
    'public.note · note_changes',
  );
});
