import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dirname, extname, join, normalize, relative } from './paths.js';

test('normalize drops . and resolves ..', () => {
  assert.equal(normalize('/a/./b/../c/'), '/a/c');
  assert.equal(normalize('a//b'), 'a/b');
  assert.equal(normalize(''), '.');
  assert.equal(normalize('a/..'), '.');
});

test('normalize keeps leading .. in relative paths', () => {
  assert.equal(normalize('../a/./b/../c'), '../a/c');
  assert.equal(normalize('../../x'), '../../x');
  assert.equal(normalize('a/../../b'), '../b');
});

test('.. cannot climb above the root', () => {
  assert.equal(normalize('/../etc'), '/etc');
  assert.equal(normalize('/..'), '/');
});

test('join', () => {
  assert.equal(join('a', '', 'b/../c'), 'a/c');
  assert.equal(join('..', 'lib'), '../lib');
});

test('dirname and extname', () => {
  assert.equal(dirname('/usr/lib/x.so'), '/usr/lib');
  assert.equal(dirname('x'), '.');
  assert.equal(extname('archive.tar.gz'), '.gz');
  assert.equal(extname('.bashrc'), '');
});

test('relative', () => {
  assert.equal(relative('/a/b/c', '/a/d'), '../../d');
  assert.equal(relative('/a', '/a'), '.');
});
