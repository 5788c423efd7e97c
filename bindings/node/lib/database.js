'use strict';
// database.js — an open emqlite file (Database), the fake clock, and the
// conversion of JavaScript values into verb arguments.
//
// Every call that touches the file runs on the libuv thread pool and
// returns a Promise. A handle is not thread-safe, so the operations of one
// Database run one at a time, in call order (a chain of promises); a
// waiting claim in flight yields to any operation queued behind it (it is
// interrupted, the operation runs, and the claim waits again), so a Worker
// and the rest of the application share one Database without stalling.
const { EventEmitter } = require('events');
const native = require('./native');
const errors = require('./errors');

const { wrap } = errors;
const noop = () => {};

/** The job history's levels, by their value in emq_history_config. */
const HISTORY_LEVELS = ['off', 'on', 'failures'];

/** 2026-01-01T00:00:00Z, where a FakeClock starts by default. */
const DEFAULT_START_MS = 1767225600000;

/**
 * A clock for tests: Unix milliseconds that move only when told to. Its
 * time lives in the addon, so transitions running on the thread pool read
 * it without calling back into JavaScript. Moving it interrupts the
 * waiting claims of the databases opened on it, so a job that falls due
 * under the new time is claimed at once.
 */
class FakeClock extends EventEmitter {
  constructor(startMs = DEFAULT_START_MS) {
    super();
    this._ext = native.clockNew(toInt(startMs, 'startMs'));
  }

  /** The current time, Unix ms. */
  now() { return Number(native.clockGet(this._ext)); }

  /** Move forward by `ms`; returns the new time. */
  advance(ms) {
    const t = native.clockSet(this._ext, this.now() + toInt(ms, 'ms'));
    this.emit('change', Number(t));
    return Number(t);
  }

  /** Set the time to `ms`. */
  set(ms) {
    const t = native.clockSet(this._ext, toInt(ms, 'ms'));
    this.emit('change', Number(t));
    return Number(t);
  }
}

function toInt(v, what) {
  if (typeof v === 'bigint') return v;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw new errors.InvalidArgument(`${what}: expected an integer, got ${String(v)}`,
      'EMQ_EINVAL', -30007);
  }
  return v;
}

/** A duration in ms (a number, or a {seconds|ms} object is not accepted:
 *  durations are plain milliseconds throughout the package). */
function toMs(v, what) {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.round(v);
  if (typeof v === 'bigint') return v;
  throw new errors.InvalidArgument(`${what}: expected milliseconds, got ${String(v)}`,
    'EMQ_EINVAL', -30007);
}

/** An instant (a Date or Unix ms) as Unix ms. */
function toInstant(v, what) {
  if (v instanceof Date) return v.getTime();
  return toMs(v, what);
}

/** A verb argument: string / Buffer / Uint8Array pass as bytes; integers
 *  and bigints as decimal; booleans as 1 / 0; null / undefined are absent;
 *  an array is flattened into its elements (a repeated tail). */
function flatArgs(args, out = []) {
  for (const a of args) {
    if (Array.isArray(a)) flatArgs(a, out);
    else out.push(arg(a));
  }
  return out;
}

function arg(a) {
  if (a === null || a === undefined) return null;
  if (typeof a === 'string' || a instanceof Uint8Array) return a;
  if (typeof a === 'number') {
    if (!Number.isInteger(a)) {
      throw new errors.InvalidArgument(`expected an integer argument, got ${a}`,
        'EMQ_EINVAL', -30007);
    }
    return String(a);
  }
  if (typeof a === 'bigint') return a.toString();
  if (typeof a === 'boolean') return a ? '1' : '0';
  if (a instanceof ArrayBuffer) return new Uint8Array(a);
  throw new errors.InvalidArgument(
    `an argument must be a string, a Buffer, an integer or a boolean, not ${typeof a}`,
    'EMQ_EINVAL', -30007);
}

/** A payload: bytes as they are, a string as UTF-8, anything else as JSON. */
function toPayload(v) {
  if (v === undefined) return Buffer.alloc(0);
  if (typeof v === 'string' || v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  return JSON.stringify(v);
}

const SYNC = { normal: 1, full: 2 };

// The listener a database puts on its clock: it holds the database weakly
// (and is made outside the constructor, whose closures hold `this`), so a
// clock that lives on does not keep a dropped database from the collector.
function clockListener(ref) {
  return () => {
    const db = ref.deref();
    if (db) db.interruptWait();
  };
}

/**
 * An open emqlite file. `path` is a file (created if absent) or ":memory:"
 * (a private in-memory database). The constructor returns at once; the
 * open runs on the thread pool and its failure rejects the first call (or
 * `await db.opened()`).
 */
class Database {
  constructor(path = ':memory:', opts = {}) {
    this.path = String(path);
    this.clock = opts.clock || null;
    this._closing = false;
    this._closed = null;
    this._pending = 0;
    this._waiting = false;
    this._intr = 0;
    this._h = null;
    this._subs = new Set();
    const o = {};
    if (opts.sync !== undefined) {
      if (!(opts.sync in SYNC)) {
        throw new errors.InvalidArgument(`sync: expected "normal" or "full", got ${opts.sync}`,
          'EMQ_EINVAL', -30007);
      }
      o.synchronous = SYNC[opts.sync];
    }
    if (opts.busyTimeout !== undefined) o.busyTimeoutMs = toMs(opts.busyTimeout, 'busyTimeout');
    if (opts.nodeId !== undefined) o.nodeId = opts.nodeId;
    if (opts.readonly) o.readonly = 1;
    if (opts.exclusive) o.exclusive = 1;
    if (opts.maxPayload !== undefined) o.maxPayload = opts.maxPayload;
    if (opts.checkpointFrames !== undefined) o.checkpointFrames = opts.checkpointFrames;
    if (opts.checksums) o.checksums = 1;
    if (opts.pageSize !== undefined) o.pageSize = opts.pageSize;
    if (this.clock && !(this.clock instanceof FakeClock)) {
      throw new errors.InvalidArgument('clock: expected a FakeClock', 'EMQ_EINVAL', -30007);
    }
    this._ready = native.open(this.path, o, this.clock ? this.clock._ext : null)
      .then((h) => { this._h = h; }, (e) => { throw wrap(e); });
    this._ready.catch(noop); // reported by the first call instead
    this._tail = this._ready.catch(noop);
    if (this.clock) {
      this._onClock = clockListener(new WeakRef(this));
      this.clock.on('change', this._onClock);
    }
  }

  /** Resolves to this database once it is open (rejects with the open's
   *  error). */
  async opened() {
    await this._ready;
    return this;
  }

  /** Run `fn(handle)` after every earlier operation of this database. */
  _op(fn, wait = false) {
    if (this._closing) {
      return Promise.reject(new errors.InvalidArgument(
        `the database ${this.path} is closed`, 'EMQ_EINVAL', -30007));
    }
    this._pending++;
    this.interruptWait();
    const run = async () => {
      try {
        await this._ready;
        if (wait) this._waiting = true;
        return await fn(this._h);
      } catch (e) {
        throw wrap(e);
      } finally {
        if (wait) this._waiting = false;
        this._pending--;
        if (this._h) this._deliver();
      }
    };
    const p = this._tail.then(run);
    this._tail = p.then(noop, noop);
    return p;
  }

  /** Events the handle's own commits delivered to its subscriptions. */
  _deliver() {
    for (const s of this._subs) s._takeLocal();
  }

  /** Make a waiting claim in flight on this database return (it waits
   *  again unless the caller is closing). */
  interruptWait() {
    if (this._h && this._waiting) {
      this._intr++;
      native.interrupt(this._h);
    }
  }

  /** Run the verb `verb` of the registry by its wire name: arguments as
   *  `flatArgs` converts them. Resolves to the wire reply: integers as
   *  numbers (bigints beyond 2^53), bulk strings as Buffers, status
   *  strings as strings, arrays, maps as objects, booleans, null. */
  call(verb, ...args) {
    let argv;
    try {
      argv = flatArgs(args);
    } catch (e) {
      return Promise.reject(e);
    }
    return this._op((h) => native.call(h, verb, argv));
  }

  /** Mint a branded id (namespace "JOB" by default). */
  mint(ns = 'JOB') {
    return this._op((h) => native.mintCall(h, ns, null, [], 0));
  }

  /** Mint a JOB id and run `verb` with it as argument `index`: [id, reply]. */
  _mintCall(verb, args, index) {
    let argv;
    try {
      argv = flatArgs(args);
    } catch (e) {
      return Promise.reject(e);
    }
    return this._op((h) => native.mintCall(h, 'JOB', verb, argv, index));
  }

  /**
   * The waiting claim (T5.13) on queue `q`: reaps lapsed leases, promotes
   * due jobs, claims one (flat or from the lanes) or waits — woken by a
   * commit of any handle in any process — for at most `timeout` ms (< 0:
   * no limit). Resolves to [id, attempts, payload] or null. An
   * AbortSignal `signal` ends it (with interruptWait()).
   */
  async claimWait(q, lease, timeout, signal = null) {
    const limit = timeout < 0 ? Infinity : Date.now() + timeout;
    // An interrupt that reaches the library after a wait returned is kept
    // for the next wait, which then returns at once: after any interrupt
    // two more looks are owed before the timeout may answer null.
    let owed = 0;
    for (;;) {
      if (this._closing || (signal && signal.aborted)) return null;
      const before = this._intr;
      let r;
      try {
        r = await this._op((h) => {
          // yield at once to the operations already queued behind us
          const left = this._pending > 1 ? 0
            : limit === Infinity ? -1 : Math.max(0, limit - Date.now());
          return native.claimWait(h, q, lease, left);
        }, true);
      } catch (e) {
        if (this._closing) return null;
        throw e;
      }
      if (r) return r;
      if (this._intr !== before) owed = 2;
      else if (owed > 0) owed--;
      if (owed === 0 && Date.now() >= limit) return null;
    }
  }

  /** The library's policy (retry attempts and backoff) for queue `q`
   *  (`id` null) or one job. */
  setPolicy(q, id, policy) {
    return this._op((h) => native.policySet(h, q, id, policy));
  }

  getPolicy(q, id) {
    return this._op((h) => native.policyGet(h, q, id));
  }

  retryByPolicy(q, id, token, error, fallback) {
    return this._op((h) => native.retryByPolicy(h, q, id, token, error, fallback || null));
  }

  /** The queues holding keys, in byte order. */
  queues() { return this._op((h) => native.queues(h)); }

  /** What happened to job `id` (of `queue`, or of any queue), oldest
   *  first: [{seq, at, kind, queue, job, attempts, delay, runAt, error,
   *  host, pid, worker}] (times Unix ms, delay ms, error a Buffer; null
   *  where the kind carries none). doc/HISTORY.md. */
  history(id, { queue = null } = {}) {
    return this._op((h) => native.history(h, queue, id));
  }

  /** What the file's job history records: 'on' (every transition, the
   *  default), 'failures' (retries, deaths, lost leases, removals and
   *  requeues) or 'off'. */
  async historyLevel() {
    return HISTORY_LEVELS[await this._op((h) => native.historyLevel(h, -1))] ?? 'on';
  }

  /** Set what the file's job history records (see historyLevel). */
  async setHistoryLevel(level) {
    const v = HISTORY_LEVELS.indexOf(level);
    if (v < 0) {
      throw new errors.InvalidArgument(
        `historyLevel must be 'on', 'failures' or 'off', not ${JSON.stringify(level)}`,
        'EMQ_EINVAL', -30007);
    }
    await this._op((h) => native.historyLevel(h, v));
  }

  /** The figures of queue `q`: {pending, active, scheduled, dead,
   *  completed, failed, paused}. */
  stats(q) { return this._op((h) => native.stats(h, q)); }

  /** The file's L1 image as a RESP command stream (a Buffer) that
   *  `redis-cli --pipe` replays into Valkey. */
  export({ queues = null, bySlot = false } = {}) {
    return this._op((h) => native.exportDb(h, queues, bySlot));
  }

  /** Apply a RESP command stream (an export) in one checked transaction. */
  import(data) { return this._op((h) => native.importDb(h, data)); }

  /** The logical digest of the keyspace: {keys, digest (hex)}. */
  digest({ queues = null } = {}) { return this._op((h) => native.digest(h, queues)); }

  /** The invariant checker: {violations, findings: [{severity, code, key,
   *  message}]}. */
  check() { return this._op((h) => native.check(h)); }

  /** A RESTART WAL checkpoint. */
  checkpoint() { return this._op((h) => native.checkpoint(h)); }

  /** The node id this handle mints with. */
  async nodeId() {
    await this._ready;
    return native.nodeId(this._h);
  }

  /** The handle's clock, Unix ms. */
  now() { return this.clock ? this.clock.now() : Date.now(); }

  /**
   * Subscribe to the file's event log (doc/EVENTS.md) for queue `q` (null:
   * every queue) after sequence `after` (0: every retained event; -1: from
   * now on). Resolves to a Subscription.
   */
  async subscribe(q = null, after = -1) {
    const ext = await this._op((h) => native.subscribe(h, q, after));
    const s = new Subscription(this, ext);
    this._subs.add(s);
    return s;
  }

  /** Every verb of the registry: [{name, tier, kind, args, summary}]. */
  static verbs() { return native.verbs(); }

  /** Close the handle once every queued operation has run (idempotent). A
   *  waiting claim in flight is interrupted. */
  close() {
    if (this._closed) return this._closed;
    this._closing = true;
    if (this.clock && this._onClock) this.clock.removeListener('change', this._onClock);
    this.interruptWait();
    this._closed = this._tail.then(async () => {
      try {
        await this._ready;
      } catch (e) {
        return; // never opened
      }
      for (const s of this._subs) s._ended = true;
      this._subs.clear();
      await native.close(this._h);
    });
    return this._closed;
  }

  get closed() { return this._closing; }
}

/** A cursor into the file's event log (see Database.subscribe). */
class Subscription {
  constructor(db, ext) {
    this.db = db;
    this._ext = ext;
    this._local = [];
    this._ended = false;
    this.cursor = 0;
    this.lost = 0;
  }

  _takeLocal() {
    if (this._ended) return;
    const evs = native.subTake(this.db._h, this._ext);
    if (evs.length) this._local.push(...evs);
  }

  _merge(r) {
    const out = this._local.concat(r.events);
    this._local = [];
    this.cursor = Number(r.cursor);
    this.lost = Number(r.lost);
    return out.map(eventValue);
  }

  /** Every event committed after the cursor (none waits): [{seq, atMs,
   *  queue, name, job, message (Buffer), data (the parsed message)}]. */
  async poll() {
    return this._merge(await this.db._op((h) => native.subPoll(h, this._ext, -1)));
  }

  /** As poll, but when nothing is there wait up to `ms` for another
   *  handle's commit (the handle is busy meanwhile: use a Database of its
   *  own for long waits, as QueueEvents does). */
  async wait(ms) {
    if (this._local.length) return this.poll();
    return this._merge(await this.db._op((h) => native.subPoll(h, this._ext, ms)));
  }

  /** End the subscription. */
  async close() {
    if (this._ended) return;
    this._ended = true;
    this.db._subs.delete(this);
    if (!this.db._closing) await this.db._op((h) => native.unsubscribe(h, this._ext));
  }
}

function eventValue(e) {
  let data = null;
  try {
    data = JSON.parse(e.message.toString('utf8'));
  } catch (err) {
    data = null;
  }
  return { ...e, seq: Number(e.seq), atMs: Number(e.atMs), data };
}

module.exports = {
  Database, FakeClock, Subscription, flatArgs, toPayload, toMs, toInstant,
  toInt, DEFAULT_START_MS,
};
