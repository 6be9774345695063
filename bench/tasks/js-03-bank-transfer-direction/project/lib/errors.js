'use strict';

class BankError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'BankError';
    this.code = code;
  }
}

const insufficientFunds = (id, balance, amount) =>
  new BankError('INSUFFICIENT_FUNDS', `account ${id} has ${balance}, needs ${amount}`);

const invalidAmount = (amount) =>
  new BankError('INVALID_AMOUNT', `amount must be a positive integer number of cents, got ${amount}`);

module.exports = { BankError, insufficientFunds, invalidAmount };
