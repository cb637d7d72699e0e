/**
 * How a server process ends: with its pending log lines written first, as far as the log's
 * descriptor takes them, and never held for good by that descriptor.
 *
 * The hazard: a log reader that stopped reading (a stuck log shipper) on a *blocking* stdout pipe
 * keeps one of libuv's pool threads in the log stream's write, and `process.exit` joins the pool's
 * threads, so it would wait for ever (seen: `uv__threadpool_cleanup` → `pthread_join`). createLogger
 * makes a pipe non-blocking, but the descriptor's mode is shared by every process on the pipe and a
 * child's start (a --workers worker) makes it blocking again. So an exit writes its last lines
 * asynchronously and waits for them (bounded); when a write then stays in the pool, the process
 * ends by SIGTERM's default action instead of `process.exit` (status 143 rather than its code; the
 * lines still pending are lost, as they could not be written anyway).
 */
import pino from 'pino';
import type { Logger } from '../core/logger.js';
import { LogStream } from '../core/logStream.js';

function logStreamOf(log: Logger): LogStream | undefined {
  const s = (log as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  return s instanceof LogStream ? s : undefined;
}

/**
 * Ends the process with `code` once the pending log lines are written, waiting at most `withinMs`
 * for the log's descriptor. The last lines go out asynchronously, never by a synchronous write,
 * which on a blocking descriptor whose reader stopped would hold the process (and no deadline can
 * interrupt it). When the descriptor took nothing by then, the pending lines are dropped (counted)
 * and the process exits with `code` — unless a write of the stream stays in libuv's pool another
 * 500 ms (a blocking pipe: it may never return), and then it ends by SIGTERM.
 */
export async function exitAfterLog(log: Logger, code: number, withinMs = 2000): Promise<never> {
  const stream = logStreamOf(log);
  if (!stream) {
    (log as { flush?: () => void }).flush?.(); // another destination (tests): its own flush
    process.exit(code);
  }
  if (!(await stream.drain(withinMs))) {
    // what is pending is lost either way; a write retrying after EAGAIN leaves the pool at once
    stream.abandon();
    if (!(await stream.leftPool(500))) return endBySignal();
  }
  process.exit(code);
}

/** SIGTERM to this process with no listener left: its default action ends it; never settles */
function endBySignal(): Promise<never> {
  process.removeAllListeners('SIGTERM');
  process.kill(process.pid, 'SIGTERM');
  return new Promise<never>(() => undefined);
}
