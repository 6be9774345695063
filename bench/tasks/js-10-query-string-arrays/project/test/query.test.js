import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseQueryString, toQueryString } from '../query.js';
import { withParams } from '../url.js';

test('scalars are encoded in order', () => {
  assert.equal(toQueryString({ q: 'a b&c', page: 2, skip: null }), 'q=a%20b%26c&page=2');
});

test('arrays become repeated keys', () => {
  assert.equal(toQueryString({ tags: ['a', 'b'], n: 1 }), 'tags=a&tags=b&n=1');
  assert.equal(toQueryString({ tags: [] }), '');
});

test('parsing scalars', () => {
  assert.deepEqual(parseQueryString('?q=a+b&flag&x=%3D'), { q: 'a b', flag: '', x: '=' });
});

test('repeated keys parse into an array', () => {
  assert.deepEqual(parseQueryString('tags=a&tags=b&tags=c&n=1'), { tags: ['a', 'b', 'c'], n: '1' });
});

test('round trip through withParams', () => {
  assert.equal(withParams('/s?tags=a&tags=b#top', { page: 3 }), '/s?tags=a&tags=b&page=3#top');
  assert.equal(withParams('/s', {}), '/s');
});
