/**
 * Line diffs for `svc metadata diff`: Myers' O(ND) algorithm on the lines between the common
 * prefix and suffix, printed as unified-diff hunks with 3 lines of context. Bounded: beyond
 * 4,000 edits the middle is shown as removed-then-added rather than searched further.
 */
import type { Paint } from './output.js';

type Op = { kind: ' ' | '-' | '+'; line: string };

const MAX_EDITS = 4_000;

export function diffLines(a: string[], b: string[]): Op[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const am = a.slice(pre, a.length - suf);
  const bm = b.slice(pre, b.length - suf);
  const middle = myers(am, bm) ?? [...am.map((line): Op => ({ kind: '-', line })), ...bm.map((line): Op => ({ kind: '+', line }))];
  return [...a.slice(0, pre).map((line): Op => ({ kind: ' ', line })), ...middle, ...a.slice(a.length - suf).map((line): Op => ({ kind: ' ', line }))];
}

function myers(a: string[], b: string[]): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_EDITS);
  const off = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    const next = v.slice();
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!) ? v[off + k + 1]! : v[off + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      next[off + k] = x;
      if (x >= n && y >= m) {
        trace.push(next);
        return backtrack(trace, a, b, off);
      }
    }
    v = next;
  }
  return undefined;
}

function backtrack(trace: Int32Array[], a: string[], b: string[], off: number): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 2; d >= 0; d--) {
    const v = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : v[off + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ kind: ' ', line: a[x - 1]! });
      x--;
      y--;
    }
    if (d === 0) break;
    if (x === prevX) ops.push({ kind: '+', line: b[y - 1]! });
    else ops.push({ kind: '-', line: a[x - 1]! });
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) {
    ops.push({ kind: ' ', line: a[x - 1]! });
    x--;
    y--;
  }
  return ops.reverse();
}

const splitLines = (s: string) => (s === '' ? [] : s.replace(/\n$/, '').split('\n'));

/** A unified diff of two texts ('' when equal). */
export function unifiedDiff(before: string, after: string, fromName: string, toName: string, paint: Paint, context = 3): string {
  if (before === after) return '';
  const ops = diffLines(splitLines(before), splitLines(after));
  const out = [paint.bold(`--- ${fromName}`), paint.bold(`+++ ${toName}`)];
  const changed = ops.map((o, i) => (o.kind !== ' ' ? i : -1)).filter((i) => i >= 0);
  let i = 0;
  while (i < changed.length) {
    let start = Math.max(0, changed[i]! - context);
    let end = Math.min(ops.length, changed[i]! + context + 1);
    let j = i + 1;
    while (j < changed.length && changed[j]! - context <= end) {
      end = Math.min(ops.length, changed[j]! + context + 1);
      j++;
    }
    let aLine = 1;
    let bLine = 1;
    for (let x = 0; x < start; x++) {
      if (ops[x]!.kind !== '+') aLine++;
      if (ops[x]!.kind !== '-') bLine++;
    }
    const hunk = ops.slice(start, end);
    const aCount = hunk.filter((o) => o.kind !== '+').length;
    const bCount = hunk.filter((o) => o.kind !== '-').length;
    out.push(paint.cyan(`@@ -${aCount ? aLine : aLine - 1},${aCount} +${bCount ? bLine : bLine - 1},${bCount} @@`));
    for (const o of hunk) {
      const text = `${o.kind}${o.line}`;
      out.push(o.kind === '-' ? paint.red(text) : o.kind === '+' ? paint.green(text) : text);
    }
    start = end;
    i = j;
  }
  return `${out.join('\n')}\n`;
}
