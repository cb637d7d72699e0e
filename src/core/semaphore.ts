/**
 * A counting semaphore with a bounded wait: `acquire(timeoutMs)` resolves with a release function,
 * or rejects after the timeout (the caller answers "busy"). Waiters are served in arrival order.
 */
export class Semaphore {
  private free: number;
  private readonly waiters: Array<{ grant: () => void }> = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  acquire(timeoutMs: number): Promise<() => void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const w = {
        grant: () => {
          clearTimeout(timer);
          resolve(this.releaser());
        },
      };
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new SemaphoreTimeout(timeoutMs));
      }, timeoutMs);
      timer.unref?.();
      this.waiters.push(w);
    });
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiters.shift();
      if (next) next.grant();
      else this.free++;
    };
  }
}

export class SemaphoreTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`timeout exceeded when trying to connect (no slot within ${timeoutMs} ms)`);
  }
}
