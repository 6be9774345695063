'use strict';

const assert = require('node:assert/strict');
const { test } = require('node:test');

const { add, identity, multiply, power, shape, transpose } = require('../matrix');

test('square multiply', () => {
  assert.deepEqual(multiply([[1, 2], [3, 4]], [[5, 6], [7, 8]]), [[19, 22], [43, 50]]);
});

test('2x3 times 3x2', () => {
  const a = [[1, 2, 3], [4, 5, 6]];
  const b = [[7, 8], [9, 10], [11, 12]];
  assert.deepEqual(multiply(a, b), [[58, 64], [139, 154]]);
});

test('row vector times column vector', () => {
  assert.deepEqual(multiply([[1, 2, 3]], [[4], [5], [6]]), [[32]]);
  assert.deepEqual(shape(multiply([[1], [2]], [[3, 4, 5]])), [2, 3]);
});

test('mismatched shapes are rejected', () => {
  assert.throws(() => multiply([[1, 2]], [[1, 2]]), /cannot multiply 1x2 by 1x2/);
});

test('transpose, add, power', () => {
  assert.deepEqual(transpose([[1, 2, 3]]), [[1], [2], [3]]);
  assert.deepEqual(add(identity(2), [[1, 1], [1, 1]]), [[2, 1], [1, 2]]);
  assert.deepEqual(power([[1, 1], [1, 0]], 5), [[8, 5], [5, 3]]);
});
