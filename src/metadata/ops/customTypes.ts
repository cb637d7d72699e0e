/** set_custom_types: replaces the custom types; the builder validates them. */
import { SvcError } from '../../errors.js';
import { expectArray, reader } from '../../document/args.js';
import { SUCCESS, defineOp } from '../registry.js';
import type { CustomTypes } from '../../model/metadata.js';

defineOp('set_custom_types', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const out: CustomTypes = {};
    for (const k of ['input_objects', 'objects', 'scalars', 'enums'] as const) {
      const v = a.raw(k);
      if (v === undefined || v === null) continue;
      const list = expectArray(v, a.sub(k));
      list.forEach((item, i) => {
        const o = item as { name?: unknown; fields?: unknown; values?: unknown };
        if (!o || typeof o !== 'object' || typeof o.name !== 'string') throw new SvcError(400, 'parse-failed', 'key "name" not found', `${a.sub(k)}[${i}]`);
        if (!/^[_A-Za-z][_0-9A-Za-z]*$/.test(o.name))
          throw new SvcError(400, 'parse-failed', `${JSON.stringify(o.name)} is not a valid GraphQL name`, `${a.sub(k)}[${i}].name`);
        if ((k === 'objects' || k === 'input_objects') && !Array.isArray(o.fields))
          throw new SvcError(400, 'parse-failed', 'key "fields" not found', `${a.sub(k)}[${i}]`);
        if (k === 'enums' && !Array.isArray(o.values)) throw new SvcError(400, 'parse-failed', 'key "values" not found', `${a.sub(k)}[${i}]`);
      });
      out[k] = list;
    }
    a.done();
    ctx.state.metadata.custom_types = out;
    return SUCCESS;
  },
});
