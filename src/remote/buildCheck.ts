/**
 * Whether graphql-js can build a client schema from a remote's introspection, checked off the main
 * thread (issue 30 item 9): building a schema of thousands of types takes graphql-js most of a second,
 * which the event loop would otherwise spend away from every other request. The worker gets the
 * introspection's JSON text (already bounded and checked, src/remote/bounds.ts) and answers the
 * error message, or null when the schema builds.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { buildClientSchema, type IntrospectionQuery } from 'graphql';

const GRAPHQL = createRequire(import.meta.url).resolve('graphql');

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { buildClientSchema } = require(workerData.graphql);
let message = null;
try {
  buildClientSchema({ __schema: JSON.parse(workerData.text).data.__schema }, { assumeValid: true });
} catch (e) {
  message = e instanceof Error ? e.message : String(e);
}
parentPort.postMessage(message);
`;

function inWorker(text: string): Promise<string | null> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const w = new Worker(WORKER, { eval: true, workerData: { graphql: GRAPHQL, text } });
    w.once('message', (m: unknown) => {
      settled = true;
      resolve(typeof m === 'string' ? m : null);
      void w.terminate();
    });
    w.once('error', (e) => {
      if (!settled) reject(e);
      settled = true;
    });
    w.once('exit', (code) => {
      if (!settled) reject(new Error(`schema check worker exited with code ${code}`));
      settled = true;
    });
  });
}

/** smaller introspections are checked in place (a worker costs more than the build) */
const IN_PLACE_BYTES = 256 * 1024;

/**
 * The message graphql-js's buildClientSchema fails with on this introspection, or null. `text` is the
 * response body `schema` was parsed from (`{"data": {"__schema": …}}`).
 */
export async function clientSchemaError(schema: IntrospectionQuery['__schema'], text: string): Promise<string | null> {
  if (text.length > IN_PLACE_BYTES) {
    try {
      return await inWorker(text);
    } catch {
      // no worker (resources): checked here instead
    }
  }
  try {
    buildClientSchema({ __schema: schema }, { assumeValid: true });
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}
