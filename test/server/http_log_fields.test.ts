/**
 * Fields of the http-log line built by hand (src/server/httpLog.ts): request ids (the client's
 * `x-request-id` when it sent one, else a version-4 UUID from random bytes, unique, every random
 * digit used) and the times as JSON numbers (decimal).
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { decimal, httpLogRecord, isoTime, requestIds } from '../../src/server/httpLog.js';
import { SvcError } from '../../src/errors.js';

const reqWith = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test("the client's x-request-id is kept; an empty one is replaced", () => {
  const next = requestIds();
  assert.equal(next(reqWith({ 'x-request-id': 'abc-1' })), 'abc-1');
  assert.match(next(reqWith({ 'x-request-id': '' })), UUID_V4);
  assert.match(next(reqWith({})), UUID_V4);
});

test('generated ids: version 4, RFC variant, unique across slabs, every random digit varies', () => {
  const next = requestIds();
  const seen = new Set<string>();
  // 20,000 ids: 78 slabs of random bytes
  for (let i = 0; i < 20_000; i++) {
    const id = next(reqWith({}));
    assert.match(id, UUID_V4);
    seen.add(id);
  }
  assert.equal(seen.size, 20_000);
  // each of the 30 random hex positions takes all 16 digits over the ids (a position copied
  // from a constant or a byte reused would not)
  const ids = [...seen];
  for (let pos = 0; pos < 36; pos++) {
    if ([8, 13, 14, 18, 23].includes(pos)) continue; // dashes, the version digit
    const digits = new Set(ids.map((id) => id[pos]));
    assert.equal(digits.size, pos === 19 ? 4 : 16, `position ${pos}: ${[...digits].join('')}`);
  }
  // two sources share nothing
  const other = requestIds();
  for (let i = 0; i < 1000; i++) assert.equal(seen.has(other(reqWith({}))), false);
});

test('decimal: the log line times as JSON numbers without formatting a double', () => {
  const cases: Array<[number, number, number, string]> = [
    [0, 1e6, 6, '0.000000'],
    [1234, 1e6, 6, '0.001234'],
    [1234567.4, 1e6, 6, '1.234567'],
    [999999.6, 1e6, 6, '1.000000'],
    [5, 100, 2, '0.05'],
    [150, 100, 2, '1.50'],
    [12345, 100, 2, '123.45'],
    [3e9, 1e6, 6, '3000'],
    [Number.NaN, 100, 2, 'null'],
  ];
  for (const [units, per, digits, text] of cases) assert.equal(decimal(units, per, digits), text, `${units}/${per}`);
  // the value a double's formatting would give, for request-like times
  for (let ms = 0; ms < 5000; ms += 0.3179) {
    assert.equal(JSON.parse(decimal(ms * 1000, 1e6, 6)), Math.round(ms * 1000) / 1e6);
    assert.equal(JSON.parse(decimal(ms * 100, 100, 2)), Math.round(ms * 100) / 100);
  }
});

test("isoTime: Date#toISOString's text, the seconds formatted once", () => {
  const at = [
    0, 1, 999, 1000, 1001, -1, -999, -1000, -1001, 1_764_000_000_000, 1_764_000_000_007, 1_764_000_000_070, 1_764_000_000_700, 1_764_000_000_999,
    1_764_000_001_000, 253_402_300_799_999, 253_402_300_800_000, -62_198_755_200_001, 8.64e15, -8.64e15, 1.5, -1.5, 1_764_000_000_999.9,
  ];
  // every millisecond of a few seconds, in order and backwards (the remembered second changes both ways)
  for (let ms = 1_764_000_000_000 - 1500; ms < 1_764_000_000_000 + 1500; ms++) at.push(ms);
  for (let ms = 1_764_000_003_000; ms > 1_764_000_000_000; ms -= 7) at.push(ms);
  for (const ms of at) assert.equal(isoTime(ms), new Date(ms).toISOString(), String(ms));
});

test("an error line's query_execution_time is in seconds to the µs, as a success line's", () => {
  const req = { url: '/v1/graphql', method: 'POST', httpVersion: '1.1', socket: { remoteAddress: '127.0.0.1' } } as unknown as IncomingMessage;
  const line = (ms: number) =>
    JSON.stringify(httpLogRecord({ req, status: 200, ms, requestId: 'r', failure: new SvcError(400, 'validation-failed', 'no', '$') }));
  assert.match(line(1.855304), /"query_execution_time":0\.001855,/);
  assert.match(line(1.8555), /"query_execution_time":0\.001856,/);
  assert.match(line(12345.6789), /"query_execution_time":12\.345679,/);
  assert.match(line(1.855304), /"latency_ms":1\.86[,}]/);
});
