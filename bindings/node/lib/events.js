'use strict';
// events.js — QueueEvents: the lifecycle events of a queue read from the
// file's event log (doc/EVENTS.md), so they reach every process on the
// file, in commit order: 'completed' ({jobId}), 'failed' ({jobId,
// failedReason}), 'progress' ({jobId, data}), 'delayed' ({jobId, delay}),
// and any name emq_publish used; each listener gets (event, seq).
//
// On a file it opens a Database of its own (its waits never hold the
// application's handle) and follows the log with the library's waiting
// read; on ":memory:" (one handle, no other process) it subscribes on the
// given Database and sees each commit when the call that made it returns.
const { EventEmitter } = require('events');
const { Database } = require('./database');

function shape(e) {
  const d = e.data || {};
  const out = { jobId: e.job, name: e.name, seq: e.seq, atMs: e.atMs };
  if (e.name === 'failed') out.failedReason = d.error;
  else if (e.name === 'progress') {
    out.data = d.progress;
    try {
      out.data = JSON.parse(d.progress);
    } catch (err) { /* the text itself */ }
  } else if (e.name === 'delayed') out.delay = Number(d.run_at);
  for (const [k, v] of Object.entries(d)) {
    if (!(k in out) && k !== 'event' && k !== 'job') out[k] = v;
  }
  return out;
}

class QueueEvents extends EventEmitter {
  /** `name` the queue; options `db` (a Database or a path), `after` (the
   *  sequence to start after: -1 from now on, the default; 0 every
   *  retained event; or a saved `lastSeq`), `autorun` (true). */
  constructor(name, opts = {}) {
    super();
    this.name = name;
    this.lastSeq = 0;
    const given = opts.db;
    const path = given instanceof Database ? given.path : (given ?? ':memory:');
    this._memory = path === ':memory:' || path === '';
    if (this._memory) {
      this.db = given instanceof Database ? given : new Database(path, opts);
      this._owned = !(given instanceof Database);
    } else {
      this.db = new Database(path, given instanceof Database ? { clock: given.clock } : opts);
      this._owned = true;
    }
    this._after = opts.after ?? -1;
    this._closing = false;
    this.on('error', () => {});
    this._ready = this.db.subscribe(name, this._after).then((s) => { this._sub = s; });
    this._ready.catch((e) => this.emit('error', e));
    if (opts.autorun !== false) this.run();
  }

  /** Resolves once the subscription is in place. */
  async waitUntilReady() {
    await this._ready;
    return this;
  }

  _emitAll(evs) {
    for (const e of evs) {
      this.lastSeq = e.seq;
      this.emit(e.name, shape(e), e.seq);
    }
  }

  /** Deliver what is in the log now (no wait). */
  async poll() {
    await this._ready;
    this._emitAll(await this._sub.poll());
  }

  run() {
    if (this._loop) return this._loop;
    this._loop = (async () => {
      try {
        await this._ready;
      } catch (e) {
        return;
      }
      while (!this._closing) {
        try {
          if (this._memory) {
            // the handle's own commits: delivered as each call returns
            this._emitAll(await this._sub.poll());
            await new Promise((resolve) => {
              this._wake = resolve;
              this._tick = setTimeout(resolve, 20);
            });
          } else {
            this._emitAll(await this._sub.wait(250));
          }
        } catch (e) {
          if (!this._closing) this.emit('error', e);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    })();
    return this._loop;
  }

  async close() {
    this._closing = true;
    if (this._tick) clearTimeout(this._tick);
    if (this._wake) this._wake();
    if (this._loop) await this._loop;
    if (this._sub) {
      try {
        await this._sub.close();
      } catch (e) { /* the database closed first */ }
    }
    if (this._owned) await this.db.close();
  }
}

module.exports = { QueueEvents };
