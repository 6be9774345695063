import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as api from '../src/api.js';
import { ApiError, fetchUser, loadProfile, renderProfile } from '../src/index.js';

const DATA = {
  '/users/7': { id: 7, name: 'Grace', email: 'grace@example.org' },
  '/users/7/teams': [{ name: 'navy' }, { name: 'compilers' }],
  '/users/8': { id: 8, name: 'Alan' },
  '/users/8/teams': [],
};

async function fakeTransport(method, path) {
  assert.equal(method, 'GET');
  return path in DATA ? { status: 200, body: DATA[path] } : { status: 404, body: null };
}

test('fetchUser maps the body', async () => {
  assert.deepEqual(await fetchUser(fakeTransport, 8), { id: 8, name: 'Alan', email: null });
});

test('the old name is gone', () => {
  assert.equal(api.getUser, undefined);
});

test('fetchUser reports HTTP errors', async () => {
  await assert.rejects(fetchUser(fakeTransport, 99), (e) => e instanceof ApiError && e.status === 404);
});

test('profiles combine user and teams', async () => {
  const profile = await loadProfile(fakeTransport, 7);
  assert.equal(renderProfile(profile), 'Grace <grace@example.org> (compilers, navy)');
  assert.equal(renderProfile(await loadProfile(fakeTransport, 8)), 'Alan (no teams)');
});
