/**
 * YAML in and out, with the `yaml` package (YAML 1.2: `yes`/`no`/`on` stay strings, so JSON
 * values round-trip). Written: block style, no line folding (long strings stay on one line, SQL
 * and GraphQL as literal blocks), never anchors/aliases. Read: duplicate keys and aliases beyond
 * 100 refused; errors name the file, line and column.
 */
import { readFileSync } from 'node:fs';
import { parseDocument, stringify } from 'yaml';
import { fileError } from './messages.js';

export function toYaml(value: unknown): string {
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false, indentSeq: false });
}

export function parseYaml(text: string, file: string): unknown {
  const doc = parseDocument(text, { uniqueKeys: true });
  const err = doc.errors[0];
  if (err) {
    const at = err.linePos?.[0];
    throw fileError(file, `${at ? `${at.line}:${at.col}: ` : ''}${err.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`);
  }
  return doc.toJS({ maxAliasCount: 100 });
}

export function readYamlFile(path: string, label = path): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw fileError(label, (e as Error).message);
  }
  return parseYaml(text, label);
}
