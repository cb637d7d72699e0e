/**
 * GeoJSON input values of geometry/geography columns, checked as Hasura's
 * parser does (messages and paths of its `FromJSON` instances): positions
 * have 2 or 3 numbers, line strings 2+ positions, linear rings 4+ positions
 * and end where they start.
 */
import { SvcError } from '../errors.js';
import { JsonNumber } from '../json.js';

const fail = (message: string, path: string) => new SvcError(400, 'parse-failed', message, path);

function kindOf(v: unknown): string {
  if (v === null) return 'Null';
  if (Array.isArray(v)) return 'Array';
  if (typeof v === 'number' || v instanceof JsonNumber) return 'Number';
  if (typeof v === 'string') return 'String';
  if (typeof v === 'boolean') return 'Boolean';
  return 'Object';
}

function array(v: unknown, what: string, path: string): unknown[] {
  if (!Array.isArray(v)) throw fail(`expected ${what}, encountered ${kindOf(v)}`, path);
  return v;
}

function position(v: unknown, path: string): number[] {
  const a = array(v, 'Position', path);
  if (a.length < 2) throw fail('A Position needs at least 2 elements', path);
  // anything past 3 elements is ignored; a literal numeral kept as written (1.50) is its double here
  const ns = a.map((x) => (x instanceof JsonNumber ? Number(x.text) : x));
  ns.slice(0, 3).forEach((x, i) => {
    if (typeof x !== 'number') throw fail(`expected Double, encountered ${kindOf(x)}`, `${path}[${i}]`);
  });
  return ns as number[];
}

const positions = (v: unknown, what: string, path: string) => array(v, what, path).map((p, i) => position(p, `${path}[${i}]`));

function lineString(v: unknown, path: string): void {
  const a = array(v, 'LineString', path);
  if (a.length < 2) throw fail('A LineString needs at least 2 Positions', path);
  positions(a, 'LineString', path);
}

function linearRing(v: unknown, path: string): void {
  const a = array(v, 'LinearRing', path);
  if (a.length < 4) throw fail('A LinearRing needs at least 4 Positions', path);
  const ps = positions(a, 'LinearRing', path);
  const first = ps[0]!;
  const last = ps[ps.length - 1]!;
  if (first.length !== last.length || first.some((x, i) => x !== last[i])) throw fail('the first and last locations have to be equal for a LinearRing', path);
}

function field(o: Record<string, unknown>, key: string, path: string): unknown {
  if (!(key in o)) throw fail(`key "${key}" not found`, path);
  return o[key];
}

function geometry(v: unknown, path: string): void {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw fail(`expected Object, encountered ${kindOf(v)}`, path);
  const o = v as Record<string, unknown>;
  const type = field(o, 'type', path);
  if (typeof type !== 'string') throw fail(`expected Text, encountered ${kindOf(type)}`, `${path}.type`);
  const cp = `${path}.coordinates`;
  switch (type) {
    case 'Point':
      position(field(o, 'coordinates', path), cp);
      break;
    case 'MultiPoint':
      positions(field(o, 'coordinates', path), 'MultiPoint', cp);
      break;
    case 'LineString':
      lineString(field(o, 'coordinates', path), cp);
      break;
    case 'MultiLineString':
      array(field(o, 'coordinates', path), 'MultiLineString', cp).forEach((l, i) => lineString(l, `${cp}[${i}]`));
      break;
    case 'Polygon':
      array(field(o, 'coordinates', path), 'Polygon', cp).forEach((r, i) => linearRing(r, `${cp}[${i}]`));
      break;
    case 'MultiPolygon':
      array(field(o, 'coordinates', path), 'MultiPolygon', cp).forEach((p, i) =>
        array(p, 'Polygon', `${cp}[${i}]`).forEach((r, j) => linearRing(r, `${cp}[${i}][${j}]`)),
      );
      break;
    case 'GeometryCollection': {
      const gp = `${path}.geometries`;
      array(field(o, 'geometries', path), 'GeometryCollection', gp).forEach((g, i) => geometry(g, `${gp}[${i}]`));
      break;
    }
    default:
      throw fail(`unexpected geometry type: ${type}`, path);
  }
  if (o.crs !== undefined && o.crs !== null) crs(o.crs, `${path}.crs`);
}

function crs(v: unknown, path: string): void {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw fail(`expected Object, encountered ${kindOf(v)}`, path);
  const o = v as Record<string, unknown>;
  const type = field(o, 'type', path);
  if (type !== 'name' && type !== 'link' && type !== 'epsg') throw fail(`unexpected crs type: ${String(type)}`, path);
}

/** Throws `parse-failed` when `v` is not a GeoJSON geometry Hasura accepts. */
export function checkGeoJson(v: unknown, path: string): void {
  geometry(v, path);
}
