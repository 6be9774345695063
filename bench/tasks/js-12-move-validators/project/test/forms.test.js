import assert from 'node:assert/strict';
import { test } from 'node:test';

import { summarizeMessage } from '../src/contact.js';
import * as helpers from '../src/helpers.js';
import { validateSignup } from '../src/signup.js';
import { isEmail, isUrl } from '../src/validators.js';

test('validators', () => {
  assert.equal(isEmail(' ada@example.org '), true);
  assert.equal(isEmail('ada@example'), false);
  assert.equal(isUrl('https://example.org/x'), true);
  assert.equal(isUrl('ftp://example.org'), false);
  assert.equal(isUrl('not a url'), false);
});

test('helpers keep only the string helpers', () => {
  assert.deepEqual(Object.keys(helpers).sort(), ['capitalize', 'truncate']);
  assert.equal(helpers.truncate('abcdef', 4), 'abc…');
});

test('signup', () => {
  const good = validateSignup({ name: ' ada ', email: 'Ada@Example.org', website: 'https://ada.dev' });
  assert.deepEqual(good, {
    ok: true,
    errors: {},
    value: { name: 'Ada', email: 'ada@example.org', website: 'https://ada.dev' },
  });
  const bad = validateSignup({ name: 'a', email: 'nope', website: 'javascript:alert(1)' });
  assert.deepEqual(Object.keys(bad.errors), ['name', 'email', 'website']);
});

test('contact', () => {
  assert.equal(
    summarizeMessage({ from: 'bob@example.org', subject: '', body: 'Hello there, I would like to ask about pricing' }),
    'bob@example.org: Hello there, I would like to …',
  );
  assert.throws(() => summarizeMessage({ from: 'bob', subject: 'x' }), /cannot reply/);
});
