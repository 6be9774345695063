'use strict';

const assert = require('node:assert/strict');
const { test } = require('node:test');

const { Emitter } = require('../emitter');

test('on and emit', () => {
  const e = new Emitter();
  const seen = [];
  e.on('data', (a, b) => seen.push(a + b));
  assert.equal(e.emit('data', 1, 2), true);
  assert.equal(e.emit('other'), false);
  assert.deepEqual(seen, [3]);
});

test('the function returned by on() unsubscribes', () => {
  const e = new Emitter();
  let calls = 0;
  const stop = e.on('tick', () => calls++);
  e.emit('tick');
  stop();
  e.emit('tick');
  assert.equal(calls, 1);
  assert.equal(e.listenerCount('tick'), 0);
});

test('once fires a single time', () => {
  const e = new Emitter();
  const seen = [];
  e.once('ready', (value) => seen.push(value));
  e.emit('ready', 'a');
  e.emit('ready', 'b');
  assert.deepEqual(seen, ['a']);
  assert.equal(e.listenerCount('ready'), 0);
});

test('a once listener can be removed with off before it fires', () => {
  const e = new Emitter();
  const listener = () => assert.fail('should not run');
  e.once('ready', listener);
  assert.equal(e.off('ready', listener), true);
  assert.equal(e.emit('ready'), false);
});

test('once listeners keep their order among other listeners', () => {
  const e = new Emitter();
  const order = [];
  e.on('x', () => order.push('on-1'));
  e.once('x', () => order.push('once'));
  e.on('x', () => order.push('on-2'));
  e.emit('x');
  e.emit('x');
  assert.deepEqual(order, ['on-1', 'once', 'on-2', 'on-1', 'on-2']);
});

test('once rejects non-functions', () => {
  assert.throws(() => new Emitter().once('x', 42), TypeError);
});
