import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ExprError, evaluate, tokenize } from '../expr.js';

test('integer arithmetic and precedence', () => {
  assert.equal(evaluate('1 + 2 * 3'), 7);
  assert.equal(evaluate('(1 + 2) * 3'), 9);
  assert.equal(evaluate('2 ^ 3 ^ 2'), 512);
  assert.equal(evaluate('-2 ^ 2'), -4);
  assert.equal(evaluate('10 % 4 - -1'), 3);
});

test('decimal numbers', () => {
  assert.equal(evaluate('1.5 * 2'), 3);
  assert.equal(evaluate('.5 + 0.25'), 0.75);
  assert.equal(evaluate('3. / 2'), 1.5);
  assert.deepEqual(tokenize('2.75').map((t) => t.value), [2.75, null]);
});

test('variables and functions', () => {
  assert.equal(evaluate('max(a, b, 3) + abs(-c)', { a: 1, b: 7, c: 2 }), 9);
  assert.equal(evaluate('round(sqrt(x))', { x: 10 }), 3);
});

test('errors carry a position', () => {
  assert.throws(() => evaluate('1 + $'), (e) => e instanceof ExprError && e.position === 4);
  assert.throws(() => evaluate('1 / (2 - 2)'), /division by zero at position 2/);
  assert.throws(() => evaluate('foo(1)'), /unknown function 'foo'/);
  assert.throws(() => evaluate('min()'), /wrong number of arguments/);
  assert.throws(() => evaluate('(1 + 2'), /expected '\)'/);
  assert.throws(() => evaluate('y * 2'), /unknown variable 'y'/);
});
