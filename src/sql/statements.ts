/**
 * User SQL (run_sql) cut into its statements the way PostgreSQL's lexer sees them: a `;` ends a
 * statement unless it is inside a string ('…', E'…' with backslash escapes), a quoted identifier
 * ("…"), a dollar-quoted body ($$…$$, $tag$…$tag$), a line comment (-- …) or a block comment
 * (/* … *\/, nested as PostgreSQL nests them), or the body of a SQL-standard function or procedure
 * (`CREATE [OR REPLACE] FUNCTION|PROCEDURE … BEGIN ATOMIC …; …; END`: as psql does, BEGIN and CASE
 * open and END closes a block in such a statement). Parentheses do not matter to PostgreSQL's own
 * split (a `;` inside them is a syntax error there), so they do not here either.
 */

export interface SqlStatement {
  /** offset of the statement's first character (past leading blanks and comments) */
  start: number;
  /** offset just past its last character (its `;`, or the end of the text, excluded) */
  end: number;
  /** its first words, lower-cased (up to three: `rollback to savepoint`, `commit prepared`…) */
  words: string[];
}

const isIdentChar = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x24 || c >= 0x80;
const isIdentStart = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c >= 0x80;
const isBlank = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0c || c === 0x0b;

/**
 * The statements of `sql` (empty ones left out). Unterminated quoting or comments run to the end
 * of the text (PostgreSQL would refuse it; the caller sends it and PostgreSQL says so).
 */
export function sqlStatements(sql: string): SqlStatement[] {
  const out: SqlStatement[] = [];
  const n = sql.length;
  let start = -1; // the current statement's first character, -1 before it
  let i = 0;
  // CREATE FUNCTION/PROCEDURE: words seen, and the depth of BEGIN/CASE … END blocks
  let seen = 0;
  let routine = false;
  let depth = 0;
  const close = (end: number) => {
    if (start >= 0) out.push({ start, end, words: firstWords(sql, start, end) });
    start = -1;
    seen = 0;
    routine = false;
    depth = 0;
  };
  while (i < n) {
    const c = sql.charCodeAt(i);
    if (isBlank(c)) {
      i++;
      continue;
    }
    // comments belong to no statement's start
    if (c === 0x2d && sql.charCodeAt(i + 1) === 0x2d) {
      const nl = sql.indexOf('\n', i + 2);
      i = nl < 0 ? n : nl + 1;
      continue;
    }
    if (c === 0x2f && sql.charCodeAt(i + 1) === 0x2a) {
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (sql.charCodeAt(i) === 0x2f && sql.charCodeAt(i + 1) === 0x2a) {
          depth++;
          i += 2;
        } else if (sql.charCodeAt(i) === 0x2a && sql.charCodeAt(i + 1) === 0x2f) {
          depth--;
          i += 2;
        } else i++;
      }
      continue;
    }
    if (c === 0x3b) {
      if (depth === 0) close(i);
      i++;
      continue;
    }
    if (start < 0) start = i;
    if (c === 0x27) {
      // '…' ('' inside); E'…' also takes backslash escapes
      const prev = i > 0 ? sql.charCodeAt(i - 1) : 0;
      const escapes = (prev === 0x45 || prev === 0x65) && (i < 2 || !isIdentChar(sql.charCodeAt(i - 2)));
      i++;
      while (i < n) {
        const d = sql.charCodeAt(i);
        if (escapes && d === 0x5c) i += 2;
        else if (d === 0x27) {
          if (sql.charCodeAt(i + 1) === 0x27) i += 2;
          else break;
        } else i++;
      }
      i++;
      continue;
    }
    if (c === 0x22) {
      const q = sql.indexOf('"', i + 1);
      // "" inside a quoted identifier: two quoted pieces back to back, the same to this split
      i = q < 0 ? n : q + 1;
      continue;
    }
    if (c === 0x24 && (i === 0 || !isIdentChar(sql.charCodeAt(i - 1)))) {
      // $tag$ or $$ (not $1, a parameter): the body runs to the same tag
      let j = i + 1;
      if (j < n && isIdentStart(sql.charCodeAt(j))) {
        j++;
        while (j < n && isIdentChar(sql.charCodeAt(j)) && sql.charCodeAt(j) !== 0x24) j++;
      }
      if (sql.charCodeAt(j) === 0x24) {
        const tag = sql.slice(i, j + 1);
        const endAt = sql.indexOf(tag, j + 1);
        i = endAt < 0 ? n : endAt + tag.length;
        continue;
      }
    }
    if (isIdentChar(c)) {
      // a word (or a number): a `$` inside it is part of it
      const w = i;
      while (i < n && isIdentChar(sql.charCodeAt(i))) i++;
      if (seen < 4 || routine) {
        const word = sql.slice(w, i).toLowerCase();
        if (seen < 4) {
          if (seen === 0 && word !== 'create')
            seen = 4; // not a CREATE: nothing to look for
          else if (word === 'function' || word === 'procedure') routine = true;
          seen++;
        }
        if (routine) {
          if (word === 'begin' || word === 'case') depth++;
          else if (word === 'end' && depth > 0) depth--;
        }
      }
      continue;
    }
    i++;
  }
  close(n);
  return out;
}

/** the first (up to three) words of sql[start, end), lower-cased, comments skipped */
function firstWords(sql: string, start: number, end: number): string[] {
  const words: string[] = [];
  let i = start;
  while (i < end && words.length < 3) {
    const c = sql.charCodeAt(i);
    if (isBlank(c)) i++;
    else if (c === 0x2d && sql.charCodeAt(i + 1) === 0x2d) {
      const nl = sql.indexOf('\n', i + 2);
      i = nl < 0 || nl > end ? end : nl + 1;
    } else if (c === 0x2f && sql.charCodeAt(i + 1) === 0x2a) {
      const e = sql.indexOf('*/', i + 2);
      i = e < 0 || e > end ? end : e + 2;
    } else if (isIdentStart(c)) {
      let j = i + 1;
      while (j < end && isIdentChar(sql.charCodeAt(j))) j++;
      words.push(sql.slice(i, j).toLowerCase());
      i = j;
    } else break;
  }
  return words;
}
