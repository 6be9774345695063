'use strict';

// Move `amount` cents from one account to another and journal it. The withdrawal comes first so
// an overdrawn sender leaves both accounts untouched.
function transfer(ledger, from, to, amount, memo = '') {
  if (from.id === to.id) {
    throw new Error('cannot transfer to the same account');
  }
  from.withdraw(amount);
  to.deposit(amount);
  return ledger.record(from.id, to.id, amount, memo);
}

module.exports = { transfer };
