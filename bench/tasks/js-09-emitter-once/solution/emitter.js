'use strict';

// A minimal synchronous event emitter.
class Emitter {
  constructor() {
    this.listeners = new Map();
  }

  on(event, listener) {
    if (typeof listener !== 'function') {
      throw new TypeError('listener must be a function');
    }
    if (!this.listeners.has(event)) {
      this.listeners.set(event, []);
    }
    this.listeners.get(event).push(listener);
    return () => this.off(event, listener);
  }

  once(event, listener) {
    if (typeof listener !== 'function') {
      throw new TypeError('listener must be a function');
    }
    const wrapper = (...args) => {
      this.off(event, wrapper);
      listener.apply(this, args);
    };
    wrapper.original = listener;
    return this.on(event, wrapper);
  }

  off(event, listener) {
    const list = this.listeners.get(event);
    if (!list) return false;
    const index = list.findIndex((l) => l === listener || l.original === listener);
    if (index === -1) return false;
    list.splice(index, 1);
    if (list.length === 0) this.listeners.delete(event);
    return true;
  }

  // Calls every listener with the arguments; returns whether there was any. Listeners added or
  // removed during an emit take effect from the next emit.
  emit(event, ...args) {
    const list = this.listeners.get(event);
    if (!list) return false;
    for (const listener of [...list]) {
      listener.apply(this, args);
    }
    return true;
  }

  listenerCount(event) {
    return this.listeners.get(event)?.length ?? 0;
  }
}

module.exports = { Emitter };
