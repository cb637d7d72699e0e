/**
 * SHA-256 of a string, one shot: `crypto.hash` (Node ≥ 20.12) where it exists, else createHash.
 * Used on the per-request paths (the response cache's key, the admin secret's check, persisted
 * queries' hashes): the one-shot form costs ~0.8 µs against createHash's ~1.7 µs for a short text
 * (no Hash object, no stream machinery).
 */
import crypto from 'node:crypto';

type OneShot = (algorithm: string, data: string, encoding: 'hex' | 'buffer') => string | Buffer;
const oneShot = (crypto as unknown as { hash?: OneShot }).hash;

export function sha256Hex(text: string): string {
  return oneShot ? (oneShot('sha256', text, 'hex') as string) : crypto.createHash('sha256').update(text).digest('hex');
}

export function sha256Bytes(text: string): Buffer {
  return oneShot ? (oneShot('sha256', text, 'buffer') as Buffer) : crypto.createHash('sha256').update(text, 'utf8').digest();
}
