/** Issue 36: Hasura v2's set_api_limits and remove_api_limits (src/execute/apiLimits.ts applies them). */
import { parseApiLimits, apiLimitsEmpty } from '../../document/apiLimits.js';
import { SUCCESS, defineOp } from '../registry.js';
import { parseFailed } from '../../document/args.js';

defineOp('set_api_limits', {
  kind: 'metadata',
  async run(ctx, args) {
    const limits = parseApiLimits(args, '$');
    if (apiLimitsEmpty(limits)) delete ctx.state.metadata.api_limits;
    else ctx.state.metadata.api_limits = limits;
    return SUCCESS;
  },
});

// v2's reference names it remove_api_limits and its example remove_api_limit: both are accepted
for (const type of ['remove_api_limits', 'remove_api_limit']) {
  defineOp(type, {
    kind: 'metadata',
    async run(ctx, args) {
      if (args !== undefined && args !== null && (typeof args !== 'object' || Array.isArray(args) || Object.keys(args).length > 0)) {
        throw parseFailed(`${type} takes no arguments`, '$');
      }
      delete ctx.state.metadata.api_limits;
      return SUCCESS;
    },
  });
}
