import assert from 'node:assert/strict';
import { test } from 'node:test';

import { convert, dimensionOf, format } from '../units.js';

const close = (actual, expected) => assert.ok(Math.abs(actual - expected) < 1e-9, `${actual} != ${expected}`);

test('length, mass and time', () => {
  close(convert(5, 'km', 'm'), 5000);
  close(convert(1, 'mi', 'ft'), 5280);
  close(convert(16, 'oz', 'lb'), 1);
  close(convert(90, 'min', 'h'), 1.5);
});

test('temperatures', () => {
  close(convert(100, 'C', 'F'), 212);
  close(convert(-40, 'F', 'C'), -40);
  close(convert(0, 'K', 'C'), -273.15);
  close(convert(98.6, 'F', 'K'), 310.15);
  close(convert(20, 'C', 'C'), 20);
  assert.equal(dimensionOf('F'), 'temperature');
});

test('mixing dimensions is an error', () => {
  assert.throws(() => convert(1, 'kg', 'm'), /cannot convert kg \(mass\) to m \(length\)/);
  assert.throws(() => convert(1, 'C', 'm'), /cannot convert/);
  assert.throws(() => convert(1, 'parsec', 'm'), /unknown unit 'parsec'/);
});

test('format', () => {
  assert.equal(format(convert(1, 'in', 'cm'), 'cm'), '2.54 cm');
});
