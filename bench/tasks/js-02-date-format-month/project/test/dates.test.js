import assert from 'node:assert/strict';
import { test } from 'node:test';

import { formatDate, monthName, parseDate, relativeDays } from '../src/index.js';

const march = new Date(Date.UTC(2024, 2, 5, 9, 7, 3));

test('formatDate uses calendar months', () => {
  assert.equal(formatDate(march), '2024-03-05');
  assert.equal(formatDate(new Date(Date.UTC(2023, 11, 31))), '2023-12-31');
});

test('formatDate with a time pattern', () => {
  assert.equal(formatDate(march, 'DD/MM/YYYY HH:mm:ss'), '05/03/2024 09:07:03');
});

test('monthName', () => {
  assert.equal(monthName(march), 'March');
});

test('parseDate round-trips through formatDate', () => {
  assert.equal(formatDate(parseDate('2024-02-29 23:59'), 'YYYY-MM-DD HH:mm'), '2024-02-29 23:59');
  assert.throws(() => parseDate('2023-02-29'), /no such day/);
});

test('relativeDays', () => {
  const now = new Date(Date.UTC(2024, 0, 31, 22));
  assert.equal(relativeDays(new Date(Date.UTC(2024, 1, 1, 1)), now), 'tomorrow');
  assert.equal(relativeDays(new Date(Date.UTC(2024, 0, 28)), now), '3 days ago');
});
