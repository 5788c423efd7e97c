'use strict';
// queue.js — Queue (the producer and operator side, named as BullMQ names
// it where the protocol allows), Job (a claimed job), Lane (a tenant's fair
// lane), Stream (a queue's streams) and flows.
const { Database, flatArgs, toPayload, toMs, toInstant } = require('./database');
const errors = require('./errors');

/** The database a Queue / Worker / QueueEvents uses: a Database given as
 *  `db`, or one it opens (and closes) itself on a path. */
function useDb(opts) {
  const db = opts && opts.db;
  if (db instanceof Database) return { db, owned: false };
  return { db: new Database(db === undefined ? ':memory:' : db, opts || {}), owned: true };
}

/** A backoff as the library spells it: "fixed:MS", "exponential:BASE:CAP",
 *  "jitter:POLICY"; from BullMQ's {type, delay} (+ cap, jitter). */
function backoffSpec(b) {
  if (b === undefined || b === null) return 'fixed:1000';
  if (typeof b === 'string') return b;
  if (typeof b === 'number') return `fixed:${Math.round(b)}`;
  let s;
  if (b.type === 'fixed') s = `fixed:${Math.round(b.delay ?? 0)}`;
  else if (b.type === 'exponential') {
    s = `exponential:${Math.round(b.delay ?? 1000)}:${Math.round(b.cap ?? 3600000)}`;
  } else {
    throw new errors.InvalidArgument(
      `backoff.type: expected "fixed" or "exponential", got ${String(b.type)}`,
      'EMQ_EINVAL', -30007);
  }
  for (let i = 0; i < (b.jitter ?? 0); i++) s = `jitter:${s}`;
  return s;
}

function policyOf(p) {
  if (!p) return null;
  return { maxAttempts: p.attempts ?? p.maxAttempts ?? 3, backoff: backoffSpec(p.backoff) };
}

function text(v) {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || v instanceof Uint8Array) return v;
  return JSON.stringify(v);
}

/** A claimed job: the id, the token (attempts) that completes, retries and
 *  extends it, and the payload. */
class Job {
  constructor(queue, id, attempts, payload, group = null) {
    this.queue = queue;
    this.id = id;
    /** The fencing token: the number of claims so far, this one included. */
    this.attemptsMade = Number(attempts);
    this.token = attempts;
    /** The payload bytes. */
    this.payload = payload || Buffer.alloc(0);
    /** The lane's group id for a job claimed from a lane. */
    this.group = group;
    this.returnvalue = undefined;
    this.failedReason = undefined;
    this.lost = false;
  }

  get name() { return this.queue.name; }

  /** The payload as UTF-8 text. */
  get text() { return this.payload.toString('utf8'); }

  /** The payload parsed as JSON, or its text when it is not JSON. */
  get data() {
    const t = this.text;
    try {
      return JSON.parse(t);
    } catch (e) {
      return t;
    }
  }

  /** T2.9: set the job's progress (a string, bytes or a JSON value) and
   *  publish `progress` on the event log. */
  async updateProgress(progress) {
    const r = await this.queue.call('update_progress', this.id, text(progress));
    this.queue._emitLocal('progress', this, progress);
    return r === 1;
  }

  /** T2.10: append a log line (keep the last `keep` when > 0). */
  log(line, keep) { return this.queue.call('add_log', this.id, text(line), keep); }

  /** T1.5: complete with the token; `result` (bytes, a string or JSON)
   *  is what a flow parent records. true, or false when the job is gone. */
  async complete(result) {
    const r = await this.queue.call('complete', this.id, this.token, text(result));
    return r === 1;
  }

  /** T1.6: retry at NOW + delay ms, or dead-letter at maxAttempts:
   *  "scheduled" or "dead". */
  async retry({ delay = 0, maxAttempts = 3, error = 'failed' } = {}) {
    const r = await this.queue.call('retry', this.id, this.token, toMs(delay, 'delay'),
      maxAttempts, text(error));
    return r.toString();
  }

  /** Retry under the stored policy (the job's, else the queue's). */
  retryByPolicy(error) {
    return this.queue.db.retryByPolicy(this.queue.name, this.id, this.token, text(error),
      this.queue._fallback);
  }

  /** T1.11: extend the lease to NOW + ms. */
  async extendLock(ms) {
    return (await this.queue.call('extend_lock', this.id, this.token, toMs(ms, 'ms'))) === 1;
  }

  /** T2.15: park the job on the schedule (at a Date / ms instant, or in ms
   *  with {in: ms}). */
  moveToDelayed(at) {
    return this.queue.call('delay', this.id, this.token, toInstant(at, 'at'), 'at');
  }

  /** The job's row, state, deadlines, log count and lock. */
  inspect() { return this.queue.inspect(this.id); }
}

/**
 * A queue of one emqlite file. `new Queue(name, { db })` with `db` a
 * Database or a path (":memory:" by default; the queue then opens and
 * closes it). Every method returns a Promise.
 */
class Queue {
  constructor(name, opts = {}) {
    this.name = name;
    const { db, owned } = useDb(opts);
    this.db = db;
    this._owned = owned;
    this._fallback = policyOf(opts.defaultJobOptions);
    this._listeners = [];
  }

  /** Run verb `verb` with this queue's name as its first argument. */
  call(verb, ...args) { return this.db.call(verb, this.name, ...args); }

  _emitLocal(ev, ...args) {
    for (const l of this._listeners) l(ev, ...args);
  }

  /**
   * Add a job (T1.1 / T1.3 / T3.1): `payload` bytes, a string, or a JSON
   * value. Options: `id` (a branded JOB id; minted otherwise), `delay` ms
   * or `at` (Date / Unix ms) to schedule it, `group` to put it in that
   * tenant's fair lane, `attempts` and `backoff` for its own retry policy.
   * Resolves to the id, or null when a job with that id exists (nothing
   * changed).
   */
  async add(payload, opts = {}) {
    const p = toPayload(payload);
    let verb;
    let args;
    if (opts.group !== undefined && opts.group !== null) {
      if (opts.delay !== undefined || opts.at !== undefined) {
        throw new errors.InvalidArgument('add: a lane job cannot be scheduled (delay/at with group)',
          'EMQ_EINVAL', -30007);
      }
      verb = 'lane_enqueue';
      args = [this.name, opts.group, null, p];
    } else if (opts.at !== undefined) {
      verb = 'enqueue_at';
      args = [this.name, null, p, toInstant(opts.at, 'at')];
    } else if (opts.delay !== undefined && opts.delay > 0) {
      verb = 'enqueue_in';
      args = [this.name, null, p, toMs(opts.delay, 'delay')];
    } else {
      verb = 'enqueue';
      args = [this.name, null, p];
    }
    const idx = verb === 'lane_enqueue' ? 2 : 1;
    const pol = (opts.attempts !== undefined || opts.backoff !== undefined)
      ? policyOf(opts) : null;
    let id = opts.id;
    if (id === undefined && pol) id = await this.db.mint('JOB');
    if (pol) await this.db.setPolicy(this.name, id, pol);
    let r;
    if (id === undefined) {
      [id, r] = await this.db._mintCall(verb, args, idx);
    } else {
      args[idx] = id;
      r = await this.db.call(verb, ...args);
    }
    return r === 0 ? null : id;
  }

  /** T1.2: add several payloads (or {payload, id}) in one transaction:
   *  the ids, null for each duplicate. */
  async addBulk(items) {
    const pairs = [];
    for (const it of items) {
      const obj = it !== null && typeof it === 'object' && !(it instanceof Uint8Array) &&
        'payload' in it ? it : { payload: it };
      pairs.push([obj.id === undefined ? await this.db.mint('JOB') : obj.id,
        toPayload(obj.payload)]);
    }
    const r = await this.call('enqueue_many', pairs);
    return pairs.map((p, i) => (r[i] === 1 ? p[0] : null));
  }

  /** T1.4 claim (lease ms): a Job, or null. */
  async claim({ lease = 30000 } = {}) {
    const r = await this.call('claim', toMs(lease, 'lease'));
    return r.length ? new Job(this, r[0].toString(), r[2], r[1]) : null;
  }

  /** T5.13 the waiting claim: a Job as soon as one is ready (flat or from
   *  the lanes, woken across processes), or null after `timeout` ms (< 0:
   *  no limit). */
  async next({ lease = 30000, timeout = -1, signal = null } = {}) {
    const r = await this.db.claimWait(this.name, toMs(lease, 'lease'), toMs(timeout, 'timeout'),
      signal);
    return r ? new Job(this, r[0], r[1], r[2]) : null;
  }

  /** T3.2 claim from the fair lanes: a Job (with .group), or null. */
  async claimLane({ lease = 30000 } = {}) {
    const r = await this.call('lane_claim', toMs(lease, 'lease'));
    return r.length ? new Job(this, r[0].toString(), r[2], r[1], r[3].toString()) : null;
  }

  /** T2.14: up to `size` jobs on one deadline. */
  async claimBatch(size, { lease = 30000 } = {}) {
    const r = await this.call('claim_batch', size, toMs(lease, 'lease'));
    return r.map((j) => new Job(this, j[0].toString(), j[2], j[1]));
  }

  // ------------------------------------------------------------ reads

  /** T2.5 the job's row as {field: Buffer}, or null. */
  getJob(id) { return this.call('get_job', id); }

  /** T2.5 "pending", "active", "schedule", "dead", "awaiting_children",
   *  "unknown" or "absent". */
  async getJobState(id) { return (await this.call('get_job_state', id)).toString(); }

  /** T2.11 the job's log lines (strings), or null. */
  async getJobLogs(id) {
    const r = await this.call('get_job_logs', id);
    return r === null ? null : r.map((b) => b.toString());
  }

  /** T2.4 counts by name ("pending", "active", "schedule", "dead",
   *  "completed", "failed"; all of them by default). */
  async getJobCounts(...names) {
    if (names.length === 0) names = ['pending', 'active', 'schedule', 'dead', 'completed', 'failed'];
    const r = await this.call('counts', names.flat());
    const out = {};
    for (const k of Object.keys(r)) out[k] = Number(r[k]);
    return out;
  }

  /** The queue's figures in one read. */
  getStats() { return this.db.stats(this.name); }

  /** T1.10 the number of pending jobs. */
  async count() { return Number(await this.call('pending_size')); }

  /** T1.9 the newest n pending ids. */
  async browse(n = 10) { return (await this.call('browse', n)).map((b) => b.toString()); }

  /** A page of a set ("pending", "active", "schedule", "dead"):
   *  [{id, score}]. */
  async list(set, { offset = 0, count = 100, fromTail = false } = {}) {
    const r = await this.call('list_set', set, offset, count, fromTail ? 'tail' : 'head');
    return r.map((p) => ({ id: p[0].toString(), score: Number(p[1]) }));
  }

  /** A job's state, row, lease deadline, run-at, log count and lock. */
  inspect(id) { return this.call('job_info', id); }

  /** T2.6 {count, dataPoints} of "completed" or "failed". */
  async getMetrics(which) {
    const r = await this.call('get_metrics', which);
    return r;
  }

  // --------------------------------------------------------- operator

  /** T2.1 */
  async pause() { await this.call('set_paused'); }

  async resume() { await this.call('clear_paused'); }

  async isPaused() { return (await this.getStats()).paused; }

  /** T2.2 delete the pending jobs (and the scheduled ones): the count. */
  async drain(delayed = false) { return Number(await this.call('drain', delayed)); }

  /** T2.3 delete the paused queue entirely, `budget` jobs a transaction. */
  async obliterate({ force = false, budget = 1000 } = {}) {
    for (;;) {
      const r = await this.call('obliterate', force, budget);
      if (Number(r) === 0) return;
    }
  }

  /** T1.7 promote due scheduled jobs: the count. */
  async promote(batch = 100) { return Number(await this.call('promote', batch)); }

  /** T1.8 return lapsed leases to pending: the count. */
  async reap() { return Number(await this.call('reap')); }

  /** T2.12 remove a job (not while locked): true, false when gone. */
  async remove(id) { return (await this.call('remove_job', id)) === 1; }

  /** T2.13 a dead job back to pending. */
  async reprocess(id) { return (await this.call('reprocess_job', id)) === 1; }

  /** Every dead job back to pending: {requeued, skipped}. */
  async requeueDead(batch = 100) {
    const r = await this.call('requeue_dead', batch);
    return { requeued: Number(r[0]), skipped: Number(r[1]) };
  }

  /** T2.8 replace a job's payload. */
  async updateData(id, payload) { return (await this.call('update_data', id, toPayload(payload))) === 1; }

  /** T5.9 the pump: promote, fire repeats, deliver flow completions. */
  sweep(batch = 100) { return this.call('sweep', batch); }

  /** T5.8 a repeat registration firing `payload` every `every` ms. */
  async repeat(name, every, payload, { firstIn = 0 } = {}) {
    return (await this.call('repeat_register', name, toMs(every, 'every'), toPayload(payload),
      toMs(firstIn, 'firstIn'))) === 1;
  }

  async cancelRepeat(name) { return (await this.call('repeat_cancel', name)) === 1; }

  /** The queue's retry policy: {attempts, backoff} (BullMQ's shape; backoff
   *  {type: "fixed"|"exponential", delay, cap, jitter} or the library's
   *  "fixed:MS" spelling). null removes it. */
  setRetryPolicy(p) { return this.db.setPolicy(this.name, null, p ? policyOf(p) : null); }

  /** {maxAttempts, backoff} of the queue (id omitted) or of a job (its
   *  own, else the queue's), or null. */
  getRetryPolicy(id = null) { return this.db.getPolicy(this.name, id); }

  // ------------------------------------------------------------- lanes

  /** The fair lane of tenant `group` (a branded id, "PRT..." by
   *  convention). */
  lane(group) { return new Lane(this, group); }

  /** The lanes: {total, lanes: [{group, depth, paused}]}. */
  async lanes(count = 1000) {
    const r = await this.call('lanes', count);
    return {
      total: Number(r[0]),
      lanes: r[1].map((l) => ({ group: l[0].toString(), depth: Number(l[1]), paused: Number(l[2]) === 1 || l[2] === true })),
    };
  }

  // ------------------------------------------------------------- flows

  /**
   * Add a flow (T4.1 / T4.4 / T4.5): `{ payload, id?, children: [ {payload,
   * id?, queue?, policy?: "fp"|"id", children?} ] }`, the root in this
   * queue. Ids are minted where absent. Resolves to the tree with ids.
   */
  async addFlow(root) {
    const nodes = [];
    const walk = async (n, level, parentQueue) => {
      const id = n.id === undefined ? await this.db.mint('JOB') : n.id;
      const q = n.queue || parentQueue;
      nodes.push([level, id, toPayload(n.payload), q, n.policy || 'fp']);
      const out = { id, queue: q, children: [] };
      for (const c of n.children || []) out.children.push(await walk(c, level + 1, q));
      return out;
    };
    const tree = await walk(root, 1, this.name);
    await this.call('flow_add', nodes);
    return tree;
  }

  /** The flow below `parent`, depth first, every node with its state. */
  getFlow(parent) { return this.call('flow_tree', parent); }

  /** T4.8 the results the children recorded on `parent`. */
  getChildrenValues(parent) { return this.call('children_values', parent); }

  // ----------------------------------------------------------- streams

  /** The stream `name` of this queue. */
  stream(name) { return new Stream(this, name); }

  /** Close the database when this queue opened it. */
  async close() {
    if (this._owned) await this.db.close();
  }
}

/** A tenant's fair lane (PROTOCOL.md §6.3). */
class Lane {
  constructor(queue, group) {
    this.queue = queue;
    this.group = group;
  }

  add(payload, opts = {}) { return this.queue.add(payload, { ...opts, group: this.group }); }

  async pause() { await this.queue.call('lane_pause', this.group); }

  async resume() { await this.queue.call('lane_resume', this.group); }

  async limit(n) { await this.queue.call('limit', this.group, n); }

  async weight(w) { await this.queue.call('weight', this.group, w); }

  async depth() { return Number(await this.queue.call('depth', this.group)); }

  async drain() { return Number(await this.queue.call('lane_drain', this.group)); }

  async list({ offset = 0, count = 100, fromTail = false } = {}) {
    const r = await this.queue.call('list_lane', this.group, offset, count, fromTail ? 'tail' : 'head');
    return r.map((p) => ({ id: p[0].toString(), score: Number(p[1]) }));
  }
}

function fieldList(fields) {
  if (Array.isArray(fields)) return fields.map(toPayload);
  const out = [];
  for (const [k, v] of Object.entries(fields)) out.push(k, toPayload(v));
  return out;
}

/** A stream of a queue (PROTOCOL.md §6.5, T5.1-T5.7). */
class Stream {
  constructor(queue, name) {
    this.queue = queue;
    this.name = name;
  }

  /** T5.2 append a record ({field: value} or [f, v, ...]) under a minted
   *  EVT id: the id. */
  async append(fields) {
    return (await this.queue.call('append', this.name, null, fieldList(fields))).toString();
  }

  /** T5.3 read from..to ("-" / "+"): [{id, fields}]. */
  async read({ from = null, to = null, count = null } = {}) {
    const r = await this.queue.call('read', this.name, from, to, count);
    return r.map((e) => ({ id: e[0].toString(), fields: e[1] }));
  }

  /** The raw range (XRANGE): [[entry id, [field, value, ...]]]. */
  range(from = '-', to = '+', count = null) {
    return this.queue.call('stream_range', this.name, from, to, count);
  }

  async length() { return Number(await this.queue.call('stream_len', this.name)); }

  /** T5.4 trim to maxlen entries (or minid with {minid}). */
  async trim({ maxlen, minid, exact = true }) {
    const kind = maxlen !== undefined ? 'maxlen' : 'minid';
    return Number(await this.queue.call('trim', this.name, kind,
      maxlen !== undefined ? maxlen : minid, exact));
  }

  /** T5.6 create a consumer group at `start` ("$" or "0"). */
  createGroup(group, start = '$', mkstream = true) {
    return this.queue.call('group_create', this.name, group, start, mkstream);
  }

  /** T5.6 read for a consumer: ">" new entries (block ms waits, holding
   *  the database meanwhile). */
  readGroup(group, consumer, { id = '>', count = null, block = null } = {}) {
    return this.queue.call('group_read', this.name, group, consumer, id, count, block);
  }

  async ack(group, ...ids) {
    return Number(await this.queue.call('ack', this.name, group, ids.flat()));
  }
}

module.exports = { Queue, Job, Lane, Stream, useDb, backoffSpec, policyOf, flatArgs };
