/**
 * The destination of the server's log lines (pino's stream): each line is encoded into a chunk
 * buffer as it is written, and full chunks are written to the file descriptor asynchronously.
 *
 * Why not pino's own destination (sonic-boom): it measures the UTF-8 length of its growing
 * string buffer on every line, which costs ~3 µs per `http-log` line at 12 KB buffers — a few
 * per cent of a primary-key lookup. Why not keep the lines as strings and join them per chunk (the
 * way before): a line kept for a chunk outlives the young generation's scavenges (copied, its
 * concatenation tree kept), and the join then flattens it when it is no longer in the cache (on-CPU
 * under wrk, a_pk: 0.7 µs a request in `String::WriteToFlat` under the join alone). Encoding the
 * line at once, while it is hot, leaves nothing for the collector but garbage.
 *
 * Guarantees:
 * - lines are written whole and in the order `write` was called;
 * - a chunk (`minBytes`, default 64 KB: each hand-over to libuv's pool costs the same whatever its
 *   size) is written when the next line does not fit in it and no write is in flight, and every
 *   250 ms otherwise (an idle server's lines appear within 250 ms);
 * - `flushSync` (also run on process exit) writes every pending line synchronously; a chunk whose
 *   asynchronous write is still in flight at exit may be lost, as with sonic-boom;
 * - a stuck descriptor (a pipe whose reader stopped reading) holds neither the server nor its exit:
 *   lines wait, then are dropped past `maxBytes`; `flushSync` spends at most `stuckMs` (2 s) and
 *   drops (counting in `dropped`) what it could not write by then, or at once when a write has been
 *   in flight that long. The server's stdout (createLogger) is made non-blocking when it is a pipe
 *   or socket, so that no write waits in libuv's pool, which `process.exit` would wait for;
 * - bounded: past `maxBytes` (16 MB) pending (the descriptor does not keep up) lines are dropped
 *   and counted (`dropped`), never buffered without limit;
 * - EAGAIN (a non-blocking pipe that is full) is retried; another write error drops the chunk and
 *   is counted (`errors`): logging never takes the server down.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';

export interface LogStreamOptions {
  /** bytes of a chunk: written once full (default 65,536) */
  minBytes?: number;
  /** bytes pending past which lines are dropped (default 16 M) */
  maxBytes?: number;
  /** ms between flushes of whatever is pending (default 250) */
  periodMs?: number;
  /** ms an asynchronous write may be in flight before flushSync gives the descriptor up as stuck (default 2,000) */
  stuckMs?: number;
}

/** chunks kept for reuse once written */
const SPARE = 2;

export class LogStream {
  /** the chunk being filled, and its bytes used */
  private cur: Buffer;
  private used = 0;
  /** filled chunks (views of their used bytes) waiting for the descriptor, in order */
  private ready: Buffer[] = [];
  /** bytes in `ready` */
  private readyBytes = 0;
  private spare: Buffer[] = [];
  /** the memory of our chunks (not of a long line's own buffer), to fill again once written */
  private readonly chunks = new WeakSet<ArrayBufferLike>();
  private writing = false;
  /** a write is in libuv's pool (fs.write called, its callback not yet) */
  private inPool = false;
  /** waiting for the write in the pool to return (leftPool) */
  private outOfPool: Array<() => void> = [];
  /** when the write in flight started (performance.now()) */
  private writeSince = 0;
  private readonly stuckMs: number;
  private waiting: Array<(err?: Error | null) => void> = [];
  private readonly timer: NodeJS.Timeout;
  private readonly chunkBytes: number;
  private readonly maxBytes: number;
  private closed = false;
  /** lines dropped because too much was pending */
  dropped = 0;
  /** chunks lost to write errors */
  errors = 0;

  constructor(
    private readonly fd: number,
    opts: LogStreamOptions = {},
  ) {
    this.chunkBytes = Math.max(256, opts.minBytes ?? 65_536);
    this.maxBytes = opts.maxBytes ?? 16 * 1024 * 1024;
    this.stuckMs = opts.stuckMs ?? 2000;
    this.cur = this.newChunk();
    this.timer = setInterval(() => this.flush(), opts.periodMs ?? 250);
    this.timer.unref();
    process.once('exit', this.onExit);
  }

  private readonly onExit = (): void => this.flushSync();

  write(line: string): boolean {
    if (this.closed) return false;
    if (this.readyBytes + this.used > this.maxBytes) {
      this.dropped++;
      return false;
    }
    // at most 3 bytes of UTF-8 per UTF-16 unit: measured exactly only near a chunk's end
    const room = this.chunkBytes - this.used;
    if (line.length * 3 > room) {
      const bytes = Buffer.byteLength(line);
      if (bytes > room) {
        this.seal();
        if (bytes > this.chunkBytes) {
          // longer than a chunk: a chunk of its own
          this.push(Buffer.from(line, 'utf8'));
          if (!this.writing) this.startWrite();
          return true;
        }
      }
    }
    this.used += this.cur.write(line, this.used);
    if (!this.writing && this.ready.length) this.startWrite();
    return true;
  }

  /** Writes what is pending; `cb` once it is written (or at once when nothing is). */
  flush(cb?: (err?: Error | null) => void): void {
    if (cb) this.waiting.push(cb);
    // while a write is in flight, its end goes on (the ready chunks, then what a callback waits
    // for): a chunk sealed now would hold 64 KB for a few lines, and a stuck descriptor would
    // gather one such chunk every period, far more memory than the bytes `maxBytes` counts
    if (this.writing) return;
    this.seal();
    if (this.ready.length) this.startWrite();
    else this.settle();
  }

  /**
   * Writes every pending line now, synchronously, for at most `stuckMs` in all (a non-blocking
   * descriptor that answers EAGAIN is tried again every millisecond until then); what is not
   * written by then is dropped and counted. Nothing is tried when a write has been in flight for
   * `stuckMs` already: the descriptor takes nothing, and a blocking one would hold the process.
   */
  flushSync(): void {
    this.seal();
    const chunks = this.ready;
    this.ready = [];
    this.readyBytes = 0;
    const deadline = this.stalled() ? 0 : performance.now() + this.stuckMs;
    for (let i = 0; i < chunks.length; i++) {
      const buf = chunks[i]!;
      let off = 0;
      while (off < buf.length) {
        if (performance.now() > deadline) {
          let lost = lineCount(buf.subarray(off));
          for (let j = i + 1; j < chunks.length; j++) lost += lineCount(chunks[j]!);
          this.dropped += lost;
          return;
        }
        try {
          off += fs.writeSync(this.fd, buf, off, buf.length - off);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') {
            this.errors++;
            break;
          }
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1); // 1 ms, then again
        }
      }
    }
  }

  /**
   * Writes what is pending; resolves true once it is written, false when `ms` passed first (the
   * descriptor is not taking it).
   */
  drain(ms: number): Promise<boolean> {
    return within(ms, (done) => this.flush(done));
  }

  /**
   * Resolves true once no write of this stream is in libuv's pool (at once when none is), false
   * when `ms` passed first: that write may never return (a blocking descriptor nobody reads).
   */
  leftPool(ms: number): Promise<boolean> {
    return this.inPool ? within(ms, (done) => this.outOfPool.push(done)) : Promise.resolve(true);
  }

  /** bytes of memory held for pending lines (the chunks' whole buffers, not only their lines) */
  heldBytes(): number {
    let n = this.cur.buffer.byteLength;
    for (const c of this.ready) n += c.buffer.byteLength;
    return n;
  }

  /** whether a write has been in flight for `stuckMs` (the descriptor takes nothing) */
  private stalled(): boolean {
    return this.writing && performance.now() - this.writeSince > this.stuckMs;
  }

  /**
   * Drops what is pending (counted in `dropped`) and writes nothing more, at exit neither; a write
   * retrying after EAGAIN stops (one in the pool returns, see leftPool).
   */
  abandon(): void {
    this.seal();
    for (const c of this.ready) this.dropped += lineCount(c);
    this.ready = [];
    this.readyBytes = 0;
    this.closed = true;
    clearInterval(this.timer);
    process.removeListener('exit', this.onExit);
  }

  /** Stops the timer and writes what is pending (synchronously). */
  end(): void {
    if (this.closed) return;
    clearInterval(this.timer);
    process.removeListener('exit', this.onExit);
    this.flushSync();
    this.closed = true;
  }

  /** the chunk being filled, when it holds anything, to `ready`; a fresh (or spare) one to fill */
  private seal(): void {
    if (this.used === 0) return;
    this.push(this.cur.subarray(0, this.used));
    this.cur = this.spare.pop() ?? this.newChunk();
    this.used = 0;
  }

  private newChunk(): Buffer {
    const b = Buffer.allocUnsafeSlow(this.chunkBytes);
    this.chunks.add(b.buffer);
    return b;
  }

  private push(buf: Buffer): void {
    this.ready.push(buf);
    this.readyBytes += buf.length;
  }

  private startWrite(): void {
    const buf = this.ready.shift()!;
    this.readyBytes -= buf.length;
    this.writing = true;
    this.writeSince = performance.now();
    this.writeFrom(buf, 0, 0);
  }

  private writeFrom(buf: Buffer, off: number, retries: number): void {
    if (this.closed) {
      // ended or abandoned while a retry after EAGAIN waited: the owner may have closed the
      // descriptor since, and its number may now be another file's
      this.writing = false;
      return;
    }
    this.inPool = true;
    fs.write(this.fd, buf, off, buf.length - off, null, (err, n) => {
      this.inPool = false;
      if (this.outOfPool.length) for (const f of this.outOfPool.splice(0)) f();
      if (this.closed) {
        this.writing = false; // abandoned: no retry, no next chunk
        return;
      }
      if (err) {
        if (err.code === 'EAGAIN' && retries < 1000) {
          setTimeout(() => this.writeFrom(buf, off, retries + 1), 5).unref();
          return;
        }
        this.errors++;
      } else if (off + n < buf.length) {
        this.writeSince = performance.now(); // progress: not stuck
        this.writeFrom(buf, off + n, 0);
        return;
      }
      if (this.spare.length < SPARE && this.chunks.has(buf.buffer)) this.spare.push(Buffer.from(buf.buffer, 0, this.chunkBytes));
      this.writing = false;
      if (this.ready.length) this.startWrite();
      else if (this.waiting.length && this.used) this.flush();
      else this.settle();
    });
  }

  private settle(): void {
    if (!this.waiting.length || this.writing || this.ready.length || this.used) return;
    const w = this.waiting;
    this.waiting = [];
    for (const cb of w) cb(null);
  }
}

/** true when the callback `register` is given comes within `ms`, false when `ms` passes first */
function within(ms: number, register: (done: () => void) => void): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    register(() => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/** the lines in a chunk (its newlines) */
function lineCount(b: Buffer): number {
  let n = 0;
  for (let at = b.indexOf(10); at !== -1; at = b.indexOf(10, at + 1)) n++;
  return n;
}
