/**
 * OTLP/protobuf written by hand (opentelemetry/proto, collector/trace/v1 ExportTraceServiceRequest
 * and trace/v1, common/v1): the default OTLP/HTTP encoding (OTEL_EXPORTER_OTLP_PROTOCOL
 * `http/protobuf`), written straight into one growing Buffer: no message objects, no strings per
 * span. Lengths of nested messages are reserved as one byte and the content shifted when it turns
 * out longer (as @opentelemetry/otlp-transformer's own writer does); repeated pieces (attribute
 * keys, statement texts) are encoded once and copied.
 *
 * Field numbers (proto3; wire types: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32):
 *   ExportTraceServiceRequest 1 resource_spans; ResourceSpans 1 resource, 2 scope_spans;
 *   Resource 1 attributes, 2 dropped_attributes_count; ScopeSpans 1 scope, 2 spans;
 *   InstrumentationScope 1 name, 2 version; Span 1 trace_id, 2 span_id, 3 trace_state,
 *   4 parent_span_id, 5 name, 6 kind, 7 start_time_unix_nano, 8 end_time_unix_nano, 9 attributes,
 *   11 events, 13 links, 15 status; Event 1 time_unix_nano, 2 name, 3 attributes; Link 1 trace_id,
 *   2 span_id, 3 trace_state, 4 attributes; Status 2 message, 3 code; KeyValue 1 key, 2 value;
 *   AnyValue 1 string_value, 2 bool_value, 3 int_value, 4 double_value, 5 array_value;
 *   ArrayValue 1 values.
 */
import type { Attributes, AttributeValue } from '@opentelemetry/api';

/** writes non-negative `v` (up to 2^53) as a varint at `p` of `b` (room checked by the caller); returns the position after it */
function putVarint(b: Buffer, p: number, v: number): number {
  if (v < 0x80) {
    b[p] = v;
    return p + 1;
  }
  if (v < 0x4000) {
    b[p] = (v & 0x7f) | 0x80;
    b[p + 1] = v >>> 7;
    return p + 2;
  }
  while (v >= 0x80) {
    b[p++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  b[p] = v;
  return p + 1;
}

/**
 * String#charCodeAt called as a known function: `s.charCodeAt(i)` loads the method from `s` for
 * every character, and the strings written here come in many shapes (literals, sliced URLs,
 * concatenated span names, header values, Buffer#toString's ids), whose loads V8 left to the
 * generic LoadIC in the server's encoder (~100 calls, ~15k instructions a request; callgrind)
 */
const charCodeAt = String.prototype.charCodeAt;

/**
 * Bytes of trace and span ids: a Buffer and a view of the same memory as 32-bit words (its length a
 * multiple of 4, at an offset that is one), for ProtoWriter.id.
 */
export class IdBytes {
  readonly words: Uint32Array;
  constructor(readonly bytes: Buffer) {
    if (bytes.byteOffset % 4 !== 0 || bytes.length % 4 !== 0) throw new Error('IdBytes: a Buffer aligned to 4 bytes');
    this.words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2);
  }
}

/** whether 32-bit words are stored little-endian (ProtoWriter.id reads ids as words; s390x is big-endian) */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** the tag byte of field `field` (< 16) with wire type `wire` */
export const tag = (field: number, wire: 0 | 1 | 2 | 5): number => (field << 3) | wire;

export class ProtoWriter {
  buf: Buffer;
  /** `buf` as a DataView: ids and times written a 32-bit word at a time (one bounds check for four bytes) */
  private view: DataView;
  pos = 0;

  /**
   * @param keys KeyValue key fields by attribute name, shared by the writers of one exporter (the
   * names are a small fixed set: each encoded once)
   */
  constructor(
    size = 64 * 1024,
    readonly keys: Map<string, Buffer> = new Map(),
  ) {
    this.buf = Buffer.allocUnsafeSlow(size);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
  }

  /** room for `n` more bytes */
  room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const bigger = Buffer.allocUnsafeSlow(size);
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
    this.view = new DataView(bigger.buffer, bigger.byteOffset, bigger.length);
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.pos++] = b;
  }

  /** a non-negative integer (up to 2^53) as a varint */
  varint(v: number): void {
    this.room(10);
    this.pos = putVarint(this.buf, this.pos, v);
  }

  /** an int64 (a safe integer, maybe negative: ten bytes of two's complement, as protobuf does) */
  int64(v: number): void {
    if (v >= 0) return this.varint(v);
    // two's complement over 64 bits: low and high 32-bit words of 2^64 + v
    let lo = (v % 0x100000000) >>> 0;
    let hi = Math.floor(v / 0x100000000) >>> 0;
    this.room(10);
    const b = this.buf;
    for (let i = 0; i < 9; i++) {
      b[this.pos++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi = hi >>> 7;
    }
    b[this.pos++] = lo & 0x01;
  }

  /** ms since the epoch (fractional) as fixed64 nanoseconds, without precision loss past 2^53 */
  nanos(ms: number): void {
    let whole = Math.floor(ms);
    let frac = Math.round((ms - whole) * 1e6);
    if (frac >= 1e6) {
      whole += 1;
      frac -= 1e6;
    }
    // whole·1e6 + frac with whole = h·2^32 + l: l·1e6 + frac stays below 2^53, h·1e6 below 2^32
    const h = Math.floor(whole / 0x100000000);
    const low = (whole - h * 0x100000000) * 1e6 + frac;
    const carry = Math.floor(low / 0x100000000);
    const lo = low - carry * 0x100000000;
    const hi = h * 1e6 + carry;
    this.room(8);
    const p = this.pos;
    this.view.setUint32(p, lo, true);
    this.view.setUint32(p + 4, hi, true);
    this.pos = p + 8;
  }

  double(v: number): void {
    this.room(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  /**
   * field `field`: `n` bytes (16 or 8: a trace or span id) of `ids` from byte `at` (a multiple of
   * 4), read as 32-bit words and written as such through a DataView in the host's byte order (the
   * bytes as they were): a byte loop was the encoder's costliest function (~6k instructions a traced
   * request), byte stores of the words ~3.7k (callgrind)
   */
  id(field: number, ids: IdBytes, at: number, n: number): void {
    this.room(2 + n);
    const b = this.buf;
    let p = this.pos;
    b[p++] = tag(field, 2);
    b[p++] = n;
    const words = ids.words;
    const view = this.view;
    for (let i = at >>> 2, end = (at + n) >>> 2; i < end; i++) {
      view.setUint32(p, words[i]!, LITTLE_ENDIAN);
      p += 4;
    }
    this.pos = p;
  }

  /** field `field`: a string */
  string(field: number, s: string): void {
    const n = s.length;
    if (n < 0x80) {
      // short ASCII (names, keys, most values): its length is its byte count, copied in JS
      this.room(2 + n);
      const b = this.buf;
      const start = this.pos;
      let p = start + 2;
      let i = 0;
      for (; i < n; i++) {
        const c = charCodeAt.call(s, i);
        if (c >= 0x80) break;
        b[p++] = c;
      }
      if (i === n) {
        b[start] = tag(field, 2);
        b[start + 1] = n;
        this.pos = p;
        return;
      }
    }
    const at = this.open(field);
    this.room(n * 3);
    this.pos += this.buf.write(s, this.pos, 'utf8');
    this.close(at);
  }

  /**
   * bytes encoded before (a key, a statement's value): TypedArray#set, a builtin (no call into C++
   * as Buffer#copy makes, no per-byte loop): a request's four spans took 52.1-53.0k instructions to
   * record and encode against 57.9k with a loop for up to 64 bytes and Buffer#copy above
   * (callgrind, 20,000 requests after 60,000)
   */
  raw(bytes: Buffer): void {
    const n = bytes.length;
    this.room(n);
    this.buf.set(bytes, this.pos);
    this.pos += n;
  }

  /** starts field `field` (length-delimited): returns where its length goes, for close() */
  open(field: number): number {
    this.room(2);
    this.buf[this.pos++] = tag(field, 2);
    return this.pos++;
  }

  /** ends the field opened at `at`: writes its length, shifting the content when the length needs more than one byte */
  close(at: number): void {
    const len = this.pos - at - 1;
    if (len < 0x80) {
      this.buf[at] = len;
      return;
    }
    let size = 1;
    for (let v = len; v >= 0x80; v = Math.floor(v / 0x80)) size++;
    this.room(size - 1);
    this.buf.copyWithin(at + size, at + 1, this.pos);
    this.pos += size - 1;
    putVarint(this.buf, at, len);
  }

  /** the bytes written (a copy) */
  copy(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }
}

/** an AnyValue's fields (inside its message) */
export function anyValue(w: ProtoWriter, v: AttributeValue): void {
  switch (typeof v) {
    case 'string':
      w.string(1, v);
      return;
    case 'boolean':
      w.byte(tag(2, 0));
      w.byte(v ? 1 : 0);
      return;
    case 'number':
      if (Number.isSafeInteger(v)) {
        w.byte(tag(3, 0));
        w.int64(v);
      } else {
        w.byte(tag(4, 1));
        w.double(v);
      }
      return;
    default:
      if (Array.isArray(v)) {
        const arr = w.open(5);
        for (const x of v as Array<AttributeValue | null | undefined>) {
          const at = w.open(1);
          if (x != null) anyValue(w, x);
          w.close(at);
        }
        w.close(arr);
        return;
      }
      w.string(1, String(v));
  }
}

/** KeyValue's key field (`0x0a len key`) of an attribute name, from the writer's shared memo (bounded: 1,024 names) */
function keyBytes(w: ProtoWriter, k: string): Buffer {
  let b = w.keys.get(k);
  if (b === undefined) {
    const once = new ProtoWriter(k.length * 3 + 8);
    once.string(1, k);
    b = once.copy();
    if (w.keys.size < 1024) w.keys.set(k, b);
  }
  return b;
}

/** one attribute as field `field` (a KeyValue), its value written by `value` or taken from `encoded` (an AnyValue's fields) */
export function keyValue(w: ProtoWriter, field: number, k: string, v: AttributeValue, encoded?: Buffer): void {
  const kv = w.open(field);
  w.raw(keyBytes(w, k));
  const val = w.open(2);
  if (encoded) w.raw(encoded);
  else anyValue(w, v);
  w.close(val);
  w.close(kv);
}

/** every set attribute of `a` as field `field` */
export function attributes(w: ProtoWriter, field: number, a: Attributes): void {
  for (const k in a) {
    const v = a[k];
    if (v === undefined || v === null) continue;
    keyValue(w, field, k, v);
  }
}

/** an AnyValue's encoded fields (a string value: a statement text written once) */
export function encodedString(s: string): Buffer {
  const w = new ProtoWriter(s.length * 3 + 8);
  w.string(1, s);
  return w.copy();
}
