/** `bulk` is flattened by the runner; registered so the type is known. */
import { defineOp } from '../registry.js';

defineOp('bulk', {
  kind: 'data',
  async run() {
    throw new Error('bulk is flattened by runQueryRequest');
  },
});
