import assert from 'node:assert/strict';
import { test } from 'node:test';

import { compareVersions, latest, parseVersion, satisfiesCaret } from '../semver.js';

test('parses versions with or without v', () => {
  assert.deepEqual(parseVersion('v1.2.3'), [1, 2, 3]);
  assert.throws(() => parseVersion('1.2'), /not a version/);
});

test('compares numerically, not as text', () => {
  assert.equal(compareVersions('1.10.0', '1.9.0'), 1);
  assert.equal(compareVersions('2.0.0', '10.0.0'), -1);
  assert.equal(compareVersions('1.2.3', 'v1.2.3'), 0);
});

test('latest picks the highest version', () => {
  assert.equal(latest(['1.2.0', '1.10.1', '1.9.9']), '1.10.1');
  assert.equal(latest([]), undefined);
});

test('caret ranges stay within the major version', () => {
  assert.equal(satisfiesCaret('1.12.0', '1.2.0'), true);
  assert.equal(satisfiesCaret('2.0.0', '1.2.0'), false);
  assert.equal(satisfiesCaret('1.1.0', '1.2.0'), false);
});
