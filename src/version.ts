import { readFileSync } from 'node:fs';

export const VERSION: string = (() => {
  try {
    return `v${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}`;
  } catch {
    return 'v0.0.0-dev';
  }
})();
