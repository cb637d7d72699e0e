/**
 * Nothing mutable at module scope (issue 31 item 5): state belongs to an engine (src/engine.ts) and
 * is passed to what needs it, so two engines in one process (tests, workers) share none. This test
 * reads every file under src and fails on a new module-scope `let`/`var`, a module-scope `new` of a
 * mutable thing (Map, Set, a class instance…), a module-scope object or array that the file
 * changes, or a `static` class field that is not readonly. The ones that must stay are listed in
 * ALLOWED, each with its reason; the list may only shrink.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/** `file:name` → why it may stay at module scope */
const ALLOWED: Record<string, string> = {
  // memos of pure functions of immutable inputs: the same answer for every engine
  'dml/common.ts:viewsMemo': 'memo keyed by an immutable schema cache (each engine builds its own)',
  'dml/common.ts:accessMemo': 'memo keyed by an immutable schema cache (each engine builds its own)',
  'schema/graphql/schema.ts:building': 'in-flight builds keyed by an immutable schema cache (each engine builds its own)',
  'rest/openapi.ts:memo': 'memo keyed by an immutable schema cache',
  'execute/planCache.ts:ownCaches': 'plan caches of contexts that name none (tests, tools), keyed by schema cache, never shared by engines',
  'subscriptions/liveQueryPlan.ts:cacheIds': 'ids of schema caches (keyed by the cache), used in cohort keys',
  'subscriptions/liveQueryPlan.ts:nextCacheId': 'the counter of those ids (unique across engines is all it needs)',
  'subscriptions/streamPlan.ts:cacheIds': 'ids of schema caches (keyed by the cache), used in cohort keys',
  'subscriptions/streamPlan.ts:nextCacheId': 'the counter of those ids (unique across engines is all it needs)',
  'subscriptions/streamPlan.ts:compiledStreams': 'memo keyed by an immutable query plan',
  'execute/multiplex.ts:batchStatements': 'memo keyed by an immutable query plan',
  'execute/graphql.ts:executorKinds': 'memo keyed by an immutable query plan (its executor kind)',
  'execute/apiLimits.ts:memo': 'memo keyed by an immutable schema cache',
  'execute/allowlist.ts:memo': 'memo keyed by an immutable schema cache',
  'relay/globalId.ts:memo': 'one-entry memo of a pure parse (same text, same value)',
  'http/client.ts:targets': 'bounded memo of a pure URL parse',
  'server/httpLog.ts:lastMs': 'one-entry memo of a pure timestamp format',
  'server/httpLog.ts:lastIso': 'one-entry memo of a pure timestamp format',
  'http/responseHeaders.ts:byRequest': 'side table keyed by the request object (a request belongs to one engine)',
  'http/responseHeaders.ts:extraByRequest': 'side table keyed by the request object (a request belongs to one engine)',
  'server/graphql.ts:limiters': 'keyed by the engine itself: one rate limiter per engine',
  // constant tables built once, never changed after
  'http/outbound.ts:blocked': 'the private address ranges, filled once at load, read only after',
  'metadata/registry.ts:OPS': 'the op table, filled once at load by defineOp (side-effect imports of metadata/ops), read only after',
  // process-wide by nature
  'core/tracing.ts:tracing': "OpenTelemetry's API is process-global (context manager, propagator): one tracer for the process (server/tracing.ts)",
  'server/tracing.ts:KEY_JSON': 'bounded memo of a pure attribute-key JSON encoding',
};

/** constructors of values that do not change (or are constants by design) */
const CONSTANT_CLASSES = new Set(['TextDecoder', 'TextEncoder', 'GraphQLDirective', 'RegExp', 'URL']);
const COLLECTIONS = new Set(['Map', 'Set', 'WeakMap', 'WeakSet', 'Array']);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** does the file assign to a property or element of `name`, or call a mutating method of it? */
function changedIn(text: string, name: string): boolean {
  const n = name.replace(/\$/g, '\\$');
  return new RegExp(
    `(?<![\\w.$])(?<!(?:const|let|var)\\s+)${n}(?:\\.\\w+|\\[[^\\]]*\\])+\\s*(?:=(?!=)|\\+\\+|--|[-+*/|&]=)|(?<![\\w.$])${n}(?:\\.\\w+)*\\.(?:push|pop|shift|unshift|splice|set|add|delete|clear|sort|reverse)\\(`,
  ).test(text);
}

/** the mutable module-scope state of one file: `name: what` */
export function moduleState(text: string, fileName = 'x.ts'): string[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  for (const st of sf.statements) {
    if (ts.isVariableStatement(st)) {
      const flags = st.declarationList.flags;
      const isConst = (flags & ts.NodeFlags.Const) !== 0;
      for (const d of st.declarationList.declarations) {
        if (!ts.isIdentifier(d.name)) continue;
        const name = d.name.text;
        if (!isConst) {
          out.push(`${name}: module-scope let/var`);
          continue;
        }
        let init = d.initializer;
        while (init && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init))) init = init.expression;
        if (!init) continue;
        const readonlyType = d.type !== undefined && /^(Readonly|readonly )/.test(d.type.getText(sf));
        if (ts.isNewExpression(init)) {
          const cls = init.expression.getText(sf);
          // a collection built with its contents and never changed is a lookup table; an empty one is there to be filled
          const table = COLLECTIONS.has(cls) && (init.arguments?.length ?? 0) > 0 && !changedIn(text, name);
          if (!CONSTANT_CLASSES.has(cls) && !readonlyType && !table) out.push(`${name}: module-scope new ${cls}`);
        } else if ((ts.isObjectLiteralExpression(init) || ts.isArrayLiteralExpression(init)) && changedIn(text, name)) {
          out.push(`${name}: module-scope object changed by the file`);
        }
      }
    }
    if (ts.isClassDeclaration(st)) {
      for (const m of st.members) {
        const mods = ts.canHaveModifiers(m) ? (ts.getModifiers(m) ?? []) : [];
        const isStatic = mods.some((x) => x.kind === ts.SyntaxKind.StaticKeyword);
        const isReadonly = mods.some((x) => x.kind === ts.SyntaxKind.ReadonlyKeyword);
        if (ts.isPropertyDeclaration(m) && isStatic && !isReadonly) out.push(`${st.name?.text ?? 'class'}.${m.name.getText(sf)}: static field not readonly`);
      }
    }
  }
  return out;
}

test('the detector finds what it is for', () => {
  const found = moduleState(
    `let a = 1;\nconst b = new Map();\nconst c = { n: 0 };\nc.n++;\nconst d = [1];\nd.push(2);\nclass E { static f = 1; static readonly g = 2; }\nconst h = { x: 1 };\nconst i: ReadonlySet<string> = new Set();\nconst j = new TextDecoder();\nconst k = new Set(['a']);\nconst l = new Set(['a']);\nl.add('b');\nconst m = new Registry();`,
  );
  assert.deepEqual(
    found.map((f) => f.split(':')[0]),
    ['a', 'b', 'c', 'd', 'E.f', 'l', 'm'],
  );
});

test('no mutable state at module scope in src/ beyond the allowed list (state belongs to the engine)', () => {
  const found: string[] = [];
  const seen = new Set<string>();
  for (const f of files(SRC)) {
    const rel = relative(SRC, f).split(sep).join('/');
    for (const s of moduleState(readFileSync(f, 'utf8'), f)) {
      const key = `${rel}:${s.split(':')[0]}`;
      seen.add(key);
      if (!(key in ALLOWED)) found.push(`${rel}: ${s}`);
    }
  }
  assert.deepEqual(found, [], 'module-scope state: put it on the engine (src/engine.ts) and pass it, or list it in ALLOWED with a reason');
  // the list only shrinks: an entry whose state is gone goes too
  assert.deepEqual(
    Object.keys(ALLOWED).filter((k) => !seen.has(k)),
    [],
    'ALLOWED entries that no longer exist',
  );
});
