'use strict';

const { Account } = require('./account');
const { BankError } = require('./errors');
const { Ledger } = require('./ledger');
const { transfer } = require('./transfer');

class Bank {
  constructor() {
    this.accounts = new Map();
    this.ledger = new Ledger();
  }

  open(owner, balance = 0) {
    const account = new Account(`ACC-${this.accounts.size + 1}`, owner, balance);
    this.accounts.set(account.id, account);
    return account;
  }

  get(id) {
    const account = this.accounts.get(id);
    if (!account) {
      throw new BankError('NO_SUCH_ACCOUNT', `no account ${id}`);
    }
    return account;
  }

  transfer(fromId, toId, amount, memo) {
    return transfer(this.ledger, this.get(fromId), this.get(toId), amount, memo);
  }

  totalDeposits() {
    let total = 0;
    for (const account of this.accounts.values()) total += account.balance;
    return total;
  }
}

module.exports = { Bank, BankError };
