/** /v1/query DML: select, count, insert, update, delete — any role, with its permissions. */
import { runDmlDelete, runDmlUpdate } from '../../dml/mutate.js';
import { runDmlInsert } from '../../dml/insert.js';
import { runDmlCount, runDmlSelect } from '../../dml/select.js';
import { defineOp, type OpContext } from '../registry.js';

const dml = (ctx: OpContext) => ({ cache: ctx.state.cache, config: ctx.config, session: ctx.session, db: ctx.conn, span: ctx.span });

defineOp('select', { kind: 'data', adminOnly: false, accessMode: () => 'read', run: (ctx, args) => runDmlSelect(dml(ctx), args) });
defineOp('count', { kind: 'data', adminOnly: false, accessMode: () => 'read', run: (ctx, args) => runDmlCount(dml(ctx), args) });
defineOp('insert', { kind: 'data', adminOnly: false, run: (ctx, args) => runDmlInsert(dml(ctx), args) });
defineOp('update', { kind: 'data', adminOnly: false, run: (ctx, args) => runDmlUpdate(dml(ctx), args) });
defineOp('delete', { kind: 'data', adminOnly: false, run: (ctx, args) => runDmlDelete(dml(ctx), args) });
