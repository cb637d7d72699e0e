/** node-postgres' value preparation (pg/lib/utils.js has no typings of its own): used by src/db/prepared.ts */
declare module 'pg/lib/utils.js' {
  const utils: { prepareValue(value: unknown): unknown };
  export default utils;
}
