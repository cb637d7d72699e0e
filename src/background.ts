/**
 * Background work of one engine: a set of named workers started once the schema cache is ready
 * and stopped on shutdown before the pool closes. Metadata sync between instances is the first
 * worker; event delivery, scheduled triggers and async actions plug in here (each a Worker that
 * claims rows with FOR UPDATE SKIP LOCKED and releases what it did not finish in `stop`).
 */
import type { Logger } from './core/logger.js';

export interface Worker {
  readonly name: string;
  start(): Promise<void>;
  /** stop taking new work; finish or release what is in flight within `graceMs` */
  stop(graceMs: number): Promise<void>;
}

export class WorkerSet {
  private readonly workers: Worker[] = [];
  private started = false;

  constructor(private readonly log: Logger) {}

  /** Adds a worker; started at once when the set is already running. */
  async add(w: Worker): Promise<void> {
    this.workers.push(w);
    if (this.started) await this.startOne(w);
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    for (const w of this.workers) await this.startOne(w);
  }

  /**
   * Stops every worker at once, each bounded by the grace period, so that shutdown takes one
   * grace period however many delivery queues have work in flight.
   */
  async stop(graceMs: number): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await Promise.all(this.workers.map((w) => this.stopOne(w, graceMs)));
  }

  private async stopOne(w: Worker, graceMs: number): Promise<void> {
    const t0 = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => {
      timer = setTimeout(() => r('late'), graceMs + 1_000);
    });
    const r = await Promise.race([
      w.stop(graceMs).then(
        () => 'ok' as const,
        (e: unknown) => e,
      ),
      late,
    ]);
    clearTimeout(timer);
    if (r === 'late')
      this.log.warn({ type: 'background', detail: { worker: w.name, event: 'stop-timeout', ms: Date.now() - t0 } }, `worker ${w.name} did not stop in time`);
    else if (r !== 'ok')
      this.log.error({ type: 'background', detail: { worker: w.name, error: r instanceof Error ? r.message : String(r) } }, `worker ${w.name} failed to stop`);
  }

  get names(): string[] {
    return this.workers.map((w) => w.name);
  }

  private async startOne(w: Worker): Promise<void> {
    await w.start();
    this.log.info({ type: 'background', detail: { worker: w.name, event: 'started' } });
  }
}
