/** The session type lives in core/ (lower layers use it); re-exported here for the HTTP edge. */
export { ADMIN_ROLE, isAdmin, type RequestHeaders, type Session } from '../../core/session.js';
