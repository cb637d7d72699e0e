/**
 * What commands print: text for people (colour only on a terminal, without --no-color / NO_COLOR),
 * or with `--output json` one JSON document on stdout for scripts. Warnings and errors go to
 * stderr in both modes.
 */
export interface Streams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

const CODES = { red: 31, green: 32, yellow: 33, cyan: 36, bold: 1, dim: 2 } as const;
export type Paint = Record<keyof typeof CODES, (s: string) => string>;

export function painter(on: boolean): Paint {
  const p = {} as Paint;
  for (const [k, c] of Object.entries(CODES)) p[k as keyof typeof CODES] = on ? (s: string) => `\u001b[${c}m${s}\u001b[0m` : (s: string) => s;
  return p;
}

export class Output {
  readonly paint: Paint;
  readonly errPaint: Paint;

  constructor(
    readonly json: boolean,
    color: boolean,
    private readonly streams: Streams,
  ) {
    this.paint = painter(color && !json && streams.stdout.isTTY === true);
    this.errPaint = painter(color && streams.stderr.isTTY === true);
  }

  /** A line for people (nothing in JSON mode). */
  line(text = ''): void {
    if (!this.json) this.streams.stdout.write(`${text}\n`);
  }

  /** The command's JSON result (nothing in text mode). */
  result(value: unknown): void {
    if (this.json) this.streams.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  warn(text: string): void {
    this.streams.stderr.write(`${this.errPaint.yellow('warning:')} ${text}\n`);
  }

  /** Progress for people, on stderr so that stdout stays the result (also in JSON mode). */
  progress(text: string): void {
    this.streams.stderr.write(`${text}\n`);
  }

  /** The failure: text on stderr; with --output json also the one JSON document on stdout (`result` beside `error`). */
  error(message: string, details: string[], json: Record<string, unknown> | undefined, result: Record<string, unknown> = {}): void {
    this.streams.stderr.write(`${this.errPaint.red('svc: error:')} ${message}\n`);
    for (const d of details) this.streams.stderr.write(`  ${d}\n`);
    if (this.json && json) this.streams.stdout.write(`${JSON.stringify({ ...result, error: json }, null, 2)}\n`);
  }
}

/** Rows as aligned columns (the first row is the header). */
export function table(rows: string[][], paint?: Paint): string[] {
  if (!rows.length) return [];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => visibleLength(r[i] ?? ''))));
  return rows.map((r, n) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat(widths[i]! - visibleLength(c) + 2)))
      .join('')
      .replace(/^(.*)$/, (l) => (n === 0 && paint ? paint.bold(l) : l))
      .trimEnd(),
  );
}

/** Text without our colour codes. */
export function stripColour(s: string): string {
  return s.replace(/\u001b\[\d+m/g, '');
}

function visibleLength(s: string): number {
  return stripColour(s).length;
}
