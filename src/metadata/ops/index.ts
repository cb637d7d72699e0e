/** Registers every /v1/query operation. */
import './sql.js';
import './tables.js';
import './relationships.js';
import './permissions.js';
import './functions.js';
import './metadata.js';
import './bulk.js';
import './collections.js';
import './api_limits.js';
import './event_triggers.js';
import './scheduled_triggers.js';
import './custom_types.js';
import './dml.js';
import './actions.js';
import './rest_endpoints.js';
import './inherited_roles.js';
import '../../remote/ops.js';
