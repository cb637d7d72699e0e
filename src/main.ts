/** `svc serve`: flags + env → Config → boot. Bad configuration exits 1 with a message, not a stack trace. */
import { ConfigError, helpText, parseConfig } from './config/config.js';
import { createLogger, startSvc } from './server/start.js';
import { VERSION } from './version.js';

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseConfig(process.argv.slice(2), process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`svc: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
  if (parsed.command === 'help') {
    process.stdout.write(`${helpText()}\n`);
    return;
  }
  if (parsed.command === 'version') {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  const log = createLogger(parsed.config);
  let svc;
  try {
    svc = await startSvc(parsed.config, log);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    log.error({ type: 'startup', err: msg }, 'failed to start');
    process.stderr.write(`svc: failed to start: ${msg}\n`);
    (log as { flush?: () => void }).flush?.();
    process.exit(1);
  }
  const stop = async (signal: string) => {
    log.info({ type: 'shutdown', signal }, 'shutting down: finishing in-flight requests');
    const timer = setTimeout(() => process.exit(1), 30_000);
    timer.unref();
    await svc.close();
    (log as { flush?: () => void }).flush?.();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

void main();
