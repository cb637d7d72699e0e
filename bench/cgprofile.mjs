#!/usr/bin/env node
// Where a callgrind dump's instructions went, by function, with V8's JIT code named by JavaScript
// function: callgrind names code it has no symbols for by address (`0x…`), and node started with
// --perf-basic-prof writes /tmp/perf-<pid>.map (start, size, name of each code object, e.g.
// `JS:*handle file:///…/graphqlHttp.js:300:11`; `*` optimised, `^` baseline, `~` interpreted).
// bench/instructions.mjs --perf-map keeps its dumps and prints the commands.
//
//   node bench/cgprofile.mjs self <dump> [--map F] [--per N] [--top K]
//        self cost of each function (N: requests in the dump, to print per request)
//   node bench/cgprofile.mjs callers <dump> <regex> [--map F] [--per N] [--top K]
//        who calls the functions matching <regex>: calls and the calls' inclusive cost
//   node bench/cgprofile.mjs diff <dumpA> <dumpB> [--map F] [--map-b F] [--per N] [--top K]
//        self costs of A and B side by side, largest differences first
//
// Seen with it on a_pk (README, "Performance"): JavaScript compiled by V8 is ~20 % of the main
// thread's instructions; the rest is V8's builtins (inline caches, string building), its runtime,
// the garbage collector and node's C++.
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: o, positionals: args } = parseArgs({
  allowPositionals: true,
  options: {
    map: { type: 'string' },
    'map-b': { type: 'string' },
    per: { type: 'string', default: '1' },
    top: { type: 'string', default: '50' },
  },
});
const [cmd, ...rest] = args;
for (const f of [...(cmd === 'callers' ? rest.slice(0, 1) : rest), o.map, o['map-b']]) {
  if (f !== undefined && !existsSync(f)) {
    process.stderr.write(`cgprofile: no such file: ${f}\n`);
    process.exit(2);
  }
}
const per = Number(o.per);
const top = Number(o.top);

/** a callgrind dump: self cost by function, and calls (caller → callee: count, inclusive cost) */
function readDump(file) {
  const names = new Map();
  const self = new Map();
  const calls = [];
  let fn = '';
  let cfn = '';
  let pending = -1;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    let m;
    if ((m = /^fn=\((\d+)\)(?: (.*))?$/.exec(line))) {
      if (m[2] !== undefined) names.set(m[1], m[2]);
      fn = names.get(m[1]);
    } else if ((m = /^cfn=\((\d+)\)(?: (.*))?$/.exec(line))) {
      if (m[2] !== undefined) names.set(m[1], m[2]);
      cfn = names.get(m[1]);
    } else if (line.startsWith('calls=')) {
      pending = Number(line.slice(6).split(' ')[0]);
    } else if (/^[+\-*]?\d/.test(line)) {
      const cost = Number(line.trim().split(/\s+/)[1] ?? 0);
      if (pending >= 0) {
        calls.push({ from: fn, to: cfn, n: pending, cost });
        pending = -1;
      } else self.set(fn, (self.get(fn) ?? 0) + cost);
    }
  }
  return { self, calls };
}

/** names JIT addresses from a perf map (the last entry covering an address wins: code is moved and recompiled) */
function namer(mapFile) {
  if (!mapFile) return (n) => n;
  const entries = [];
  for (const l of readFileSync(mapFile, 'utf8').split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(l);
    if (m) entries.push({ start: parseInt(m[1], 16), end: parseInt(m[1], 16) + parseInt(m[2], 16), name: m[3] });
  }
  const memo = new Map();
  return (n) => {
    const a = /^0x([0-9a-f]+)(?:'\d+)?$/.exec(n);
    if (!a) return n;
    let name = memo.get(n);
    if (name === undefined) {
      const addr = parseInt(a[1], 16);
      name = '(JIT, not in the map)';
      for (let i = entries.length - 1; i >= 0; i--)
        if (addr >= entries[i].start && addr < entries[i].end) {
          name = entries[i].name;
          break;
        }
      memo.set(n, name);
    }
    return name;
  };
}

function selfByName(dump, name) {
  const out = new Map();
  for (const [f, c] of dump.self) {
    const n = name(f);
    out.set(n, (out.get(n) ?? 0) + c);
  }
  return out;
}
const fmt = (x) => Math.round(x / per).toLocaleString('en').padStart(10);
const total = (m) => [...m.values()].reduce((a, b) => a + b, 0);
// named by the map, or (without --map) still an address
const isJit = (n) => /^(JS|RegExp|Function|LazyCompile|Script):/.test(n) || n.startsWith('(JIT') || /^0x[0-9a-f]+(?:'\d+)?$/.test(n);

if (cmd === 'self' && rest.length === 1) {
  const m = selfByName(readDump(rest[0]), namer(o.map));
  const all = total(m);
  const jit = [...m].filter(([n]) => isJit(n)).reduce((a, [, c]) => a + c, 0);
  process.stdout.write(`${fmt(all)} in all, ${fmt(jit)} in JIT code (${((jit / all) * 100).toFixed(1)} %)\n`);
  for (const [n, c] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${fmt(c)}  ${n.slice(0, 160)}\n`);
} else if (cmd === 'callers' && rest.length === 2) {
  const dump = readDump(rest[0]);
  const name = namer(o.map);
  const rx = new RegExp(rest[1]);
  const by = new Map();
  for (const c of dump.calls) {
    if (!rx.test(name(c.to))) continue;
    const e = by.get(name(c.from)) ?? { n: 0, cost: 0 };
    e.n += c.n;
    e.cost += c.cost;
    by.set(name(c.from), e);
  }
  for (const [n, e] of [...by].sort((a, b) => b[1].cost - a[1].cost).slice(0, top))
    process.stdout.write(`${fmt(e.cost)} ${(e.n / per).toFixed(1).padStart(7)} calls  ${n.slice(0, 150)}\n`);
} else if (cmd === 'diff' && rest.length === 2) {
  const a = selfByName(readDump(rest[0]), namer(o.map));
  const b = selfByName(readDump(rest[1]), namer(o['map-b'] ?? o.map));
  process.stdout.write(`${fmt(total(a))} ${fmt(total(b))} ${fmt(total(a) - total(b))}  in all (A, B, A-B)\n`);
  const rows = [...new Set([...a.keys(), ...b.keys()])].map((n) => [n, a.get(n) ?? 0, b.get(n) ?? 0]);
  rows.sort((x, y) => Math.abs(y[1] - y[2]) - Math.abs(x[1] - x[2]));
  for (const [n, x, y] of rows.slice(0, top)) process.stdout.write(`${fmt(x)} ${fmt(y)} ${fmt(x - y)}  ${n.slice(0, 130)}\n`);
} else {
  process.stderr.write('usage: cgprofile.mjs self <dump> | callers <dump> <regex> | diff <dumpA> <dumpB>  [--map F] [--map-b F] [--per N] [--top K]\n');
  process.exit(2);
}
