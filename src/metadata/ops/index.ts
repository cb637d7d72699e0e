/** Registers every /v1/query operation. */
import './sql.js';
import './tables.js';
import './relationships.js';
import './permissions.js';
import './functions.js';
import './metadata.js';
import './bulk.js';
import './collections.js';
import './apiLimits.js';
import './eventTriggers.js';
import './scheduledTriggers.js';
import './customTypes.js';
import './dml.js';
import './actions.js';
import './restEndpoints.js';
import './inheritedRoles.js';
import '../../remote/ops.js';
