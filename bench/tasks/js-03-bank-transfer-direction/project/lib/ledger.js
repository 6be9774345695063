'use strict';

// An append-only journal of movements; each entry records who paid whom.
class Ledger {
  constructor() {
    this.entries = [];
  }

  record(from, to, amount, memo = '') {
    const entry = { seq: this.entries.length + 1, from, to, amount, memo };
    this.entries.push(entry);
    return entry;
  }

  history(accountId) {
    return this.entries.filter((e) => e.from === accountId || e.to === accountId);
  }

  netFlow(accountId) {
    return this.history(accountId).reduce(
      (sum, e) => sum + (e.to === accountId ? e.amount : -e.amount),
      0,
    );
  }
}

module.exports = { Ledger };
