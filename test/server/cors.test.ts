import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultConfig } from '../../src/config/config.js';
import { corsMatcher } from '../../src/server/cors.js';

const matcher = (corsDomain: string[] | '*') => corsMatcher({ ...defaultConfig(), corsDomain });

test('a wildcard stands for one label or one port', () => {
  const m = matcher(['https://*.foo.bar.com', 'http://localhost:*', 'https://exact.example']);
  assert.equal(m('https://a.foo.bar.com'), 'https://a.foo.bar.com');
  assert.equal(m('https://a.b.foo.bar.com'), undefined);
  assert.equal(m('https://foo.bar.com'), undefined);
  assert.equal(m('https://evil.com/.foo.bar.com'), undefined);
  assert.equal(m('https://a.foo.bar.com.evil.com'), undefined);
  assert.equal(m('http://localhost:3000'), 'http://localhost:3000');
  assert.equal(m('http://localhost'), undefined);
  assert.equal(m('http://localhost:3000.evil.com'), undefined);
  assert.equal(m('https://exact.example'), 'https://exact.example');
  assert.equal(m('https://exactXexample'), undefined);
  assert.equal(m(undefined), undefined);
});

test('* allows every origin; --disable-cors none', () => {
  assert.equal(matcher('*')('https://anything.example'), 'https://anything.example');
  assert.equal(corsMatcher({ ...defaultConfig(), disableCors: true })('https://a.example'), undefined);
});
