'use strict';

const { insufficientFunds, invalidAmount } = require('./errors');

function checkAmount(amount) {
  if (!Number.isInteger(amount) || amount <= 0) {
    throw invalidAmount(amount);
  }
}

class Account {
  constructor(id, owner, balance = 0) {
    this.id = id;
    this.owner = owner;
    this.balance = balance;
  }

  deposit(amount) {
    checkAmount(amount);
    this.balance += amount;
  }

  withdraw(amount) {
    checkAmount(amount);
    if (amount > this.balance) {
      throw insufficientFunds(this.id, this.balance, amount);
    }
    this.balance -= amount;
  }
}

module.exports = { Account };
