'use strict';

const assert = require('node:assert/strict');
const { test } = require('node:test');

const { Bank, BankError } = require('../lib');

function twoAccounts() {
  const bank = new Bank();
  const alice = bank.open('Alice', 10_000);
  const bob = bank.open('Bob', 500);
  return { bank, alice, bob };
}

test('transfer moves money from sender to receiver', () => {
  const { bank, alice, bob } = twoAccounts();
  bank.transfer(alice.id, bob.id, 2_500, 'rent');
  assert.equal(alice.balance, 7_500);
  assert.equal(bob.balance, 3_000);
  assert.equal(bank.totalDeposits(), 10_500);
});

test('the ledger records the direction', () => {
  const { bank, alice, bob } = twoAccounts();
  bank.transfer(alice.id, bob.id, 100);
  assert.equal(bank.ledger.netFlow(alice.id), -100);
  assert.equal(bank.ledger.netFlow(bob.id), 100);
});

test('an overdrawn sender leaves both balances alone', () => {
  const { bank, alice, bob } = twoAccounts();
  assert.throws(() => bank.transfer(bob.id, alice.id, 600), (e) => e.code === 'INSUFFICIENT_FUNDS');
  assert.equal(bob.balance, 500);
  assert.equal(alice.balance, 10_000);
  assert.equal(bank.ledger.entries.length, 0);
});

test('invalid amounts and unknown accounts are rejected', () => {
  const { bank, alice, bob } = twoAccounts();
  assert.throws(() => bank.transfer(alice.id, bob.id, 1.5), BankError);
  assert.throws(() => bank.transfer(alice.id, 'ACC-9', 1), /no account ACC-9/);
  assert.throws(() => bank.transfer(alice.id, alice.id, 1), /same account/);
});
