'use strict';
// worker.js — Worker: runs `processor(job)` for the jobs of a queue, at
// most `concurrency` at a time, the way a BullMQ user expects:
//
//   - claims with the waiting claim (T5.13): an idle worker costs nothing
//     and wakes on a commit of any process on the file;
//   - extends the leases of the jobs in hand every `extendInterval` ms
//     (lease / 2) while the processors run, in one transaction (T1.12);
//   - a resolved processor completes the job with its return value (the
//     result a flow parent records); a thrown error retries it under the
//     queue's policy (the job's own, else the queue's, else
//     `defaultJobOptions`, else 3 attempts, fixed 1000 ms), with the
//     error's stack as last_error; at the cap it is dead-lettered and the
//     file's event log gets `failed`;
//   - runs the pump (T5.9 sweep: due jobs, repeats, flow completions) every
//     `pumpInterval` ms;
//   - close() stops claiming, waits for the jobs in hand, and returns.
//
// Local events: 'active' (job), 'completed' (job, result), 'failed' (job,
// error, verdict "scheduled"|"dead"), 'progress' (job, progress), 'lost'
// (job: its lease could not be extended), 'error' (error), 'drained'.
const { EventEmitter } = require('events');
const { Queue, Job, policyOf } = require('./queue');
const { Database, toMs } = require('./database');

function errorText(e) {
  if (e instanceof Error) return e.stack || String(e);
  if (typeof e === 'string') return e;
  try {
    return JSON.stringify(e) ?? String(e);
  } catch (err) {
    return String(e);
  }
}

function resultValue(v) {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || v instanceof Uint8Array) return v;
  return JSON.stringify(v);
}

class Worker extends EventEmitter {
  /**
   * `name` the queue; `processor(job)` an async function; options: `db` (a
   * Database or a path), `concurrency` (1), `lease` (30000 ms),
   * `extendInterval` (lease / 2), `pumpInterval` (1000 ms; 0: no pump),
   * `waitTimeout` (5000 ms: how long one waiting claim lasts before the
   * worker looks again; `drained` is emitted then), `autorun` (true),
   * `defaultJobOptions` ({attempts, backoff}: the fallback policy).
   */
  constructor(name, processor, opts = {}) {
    super();
    if (typeof processor !== 'function') {
      throw new TypeError('Worker: processor must be a function (job) => Promise');
    }
    this.name = name;
    this.processor = processor;
    this.queue = opts.queue instanceof Queue ? opts.queue : new Queue(name, opts);
    this.db = this.queue.db;
    this.concurrency = opts.concurrency ?? 1;
    this.lease = toMs(opts.lease ?? 30000, 'lease');
    this.extendInterval = toMs(opts.extendInterval ?? Math.max(1, Math.floor(this.lease / 2)),
      'extendInterval');
    this.pumpInterval = toMs(opts.pumpInterval ?? 1000, 'pumpInterval');
    this.waitTimeout = toMs(opts.waitTimeout ?? 5000, 'waitTimeout');
    if (opts.defaultJobOptions) this.queue._fallback = policyOf(opts.defaultJobOptions);
    this._active = new Map();
    this._abort = new AbortController();
    this._closing = false;
    this._running = null;
    this._slot = null;
    this._timers = [];
    this._queueListener = (ev, ...args) => {
      if (ev === 'progress' && this._active.has(args[0].id)) this.emit('progress', ...args);
    };
    this.queue._listeners.push(this._queueListener);
    this.on('error', () => {}); // an 'error' without a listener must not throw
    if (opts.autorun !== false) this.run();
  }

  /** Start the worker (autorun does it); resolves when it stopped. */
  run() {
    if (this._running) return this._running;
    if (this.extendInterval > 0) {
      this._timers.push(setInterval(() => {
        this.extendLeases().catch((e) => this.emit('error', e));
      }, this.extendInterval));
    }
    if (this.pumpInterval > 0) {
      this._timers.push(setInterval(() => {
        if (!this._closing) this.queue.sweep().catch((e) => this._closing || this.emit('error', e));
      }, this.pumpInterval));
    }
    this._running = this._loop();
    return this._running;
  }

  get running() { return Boolean(this._running) && !this._closing; }

  /** The jobs in hand. */
  get activeJobs() { return [...this._active.values()].map((a) => a.job); }

  async _loop() {
    while (!this._closing) {
      if (this._active.size >= this.concurrency) {
        await new Promise((resolve) => { this._slot = resolve; });
        continue;
      }
      let r;
      try {
        r = await this.db.claimWait(this.name, this.lease, this.waitTimeout, this._abort.signal);
      } catch (e) {
        if (this._closing) break;
        this.emit('error', e);
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      if (!r) {
        if (!this._closing) this.emit('drained');
        continue;
      }
      this._start(new Job(this.queue, r[0], r[1], r[2]));
    }
  }

  _start(job) {
    const entry = { job, done: null };
    this._active.set(job.id, entry);
    entry.done = this._process(job).finally(() => {
      this._active.delete(job.id);
      const s = this._slot;
      this._slot = null;
      if (s) s();
    });
  }

  async _process(job) {
    this.emit('active', job);
    let result;
    let failure;
    let failed = false;
    try {
      result = await this.processor(job);
    } catch (e) {
      failed = true;
      failure = e;
    }
    try {
      if (!failed) {
        const r = await this.queue.call('complete', job.id, job.token, resultValue(result));
        job.returnvalue = result;
        if (r === 1) this.emit('completed', job, result);
        else this.emit('error', new Error(`job ${job.id} was gone at completion`));
      } else {
        job.failedReason = failure instanceof Error ? failure.message : String(failure);
        const verdict = await this.db.retryByPolicy(this.name, job.id, job.token,
          errorText(failure), this.queue._fallback);
        this.emit('failed', job, failure, verdict);
      }
    } catch (e) {
      // EMQSTALE: the lease lapsed and another claim took the job
      this.emit('error', e);
    }
  }

  /** Extend the lease of every job in hand now (what the timer does every
   *  extendInterval); jobs whose lease could not be extended emit 'lost'.
   *  Resolves to the number extended. */
  async extendLeases() {
    const jobs = [...this._active.values()].map((a) => a.job);
    if (jobs.length === 0 || this.db.closed) return 0;
    const pairs = jobs.map((j) => [j.id, j.token]);
    const notExtended = await this.queue.call('extend_locks', this.lease, pairs);
    const lost = new Set(notExtended.map((b) => b.toString()));
    for (const j of jobs) {
      if (lost.has(j.id) && !j.lost) {
        j.lost = true;
        this.emit('lost', j);
      }
    }
    return jobs.length - lost.size;
  }

  /** Stop claiming and wait for the jobs in hand to finish (`force`: do
   *  not wait; their leases lapse and a reap returns them). Closes the
   *  database when the worker opened it. */
  async close(force = false) {
    if (this._closed) return this._closed;
    this._closing = true;
    this._closed = (async () => {
      const s = this._slot;
      this._slot = null;
      if (s) s();
      this._abort.abort();
      this.db.interruptWait();
      if (this._running) await this._running;
      if (!force) await Promise.all([...this._active.values()].map((a) => a.done));
      for (const t of this._timers) clearInterval(t);
      this._timers = [];
      const i = this.queue._listeners.indexOf(this._queueListener);
      if (i >= 0) this.queue._listeners.splice(i, 1);
      await this.queue.close();
    })();
    return this._closed;
  }
}

module.exports = { Worker, errorText, Database };
