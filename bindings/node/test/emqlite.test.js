'use strict';
// The Node package's tests (node:test). Time comes from the fake clock;
// the only real waits are the ones under test (a waiting claim woken by
// another process, a worker's wait interrupted by close).
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync, spawn } = require('child_process');

const emq = require('..');
const { testDb, drain } = require('../testing');

const { Queue, Worker, QueueEvents, Database, FakeClock } = emq;
const T0 = 1767225600000;

function tmpdir(t) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'emqlite-node-'));
  t.after(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

test('every call returns a Promise settled from the thread pool', async (t) => {
  const { db } = testDb(t);
  const q = new Queue('mail', { db });
  const p = q.add('hello');
  assert.ok(p instanceof Promise);
  const id = await p;
  assert.match(id, /^JOB[0-9A-Za-z]{11}$/);
  const job = await q.claim({ lease: 1000 });
  assert.equal(job.id, id);
  assert.equal(job.token, 1);
  assert.equal(job.text, 'hello');
  assert.equal(await job.complete(), true);
  assert.deepEqual(await q.getJobCounts('pending', 'completed'), { pending: 0, completed: 1 });
});

test('errors are typed and carry the exact wire text', async (t) => {
  const { db } = testDb(t);
  const q = new Queue('mail', { db });
  await q.add('x');
  const job = await q.claim();
  await assert.rejects(q.call('complete', job.id, 7), (e) => {
    assert.ok(e instanceof emq.StaleToken);
    assert.ok(e instanceof emq.EmqError);
    assert.equal(e.message, 'EMQSTALE complete token mismatch');
    assert.equal(e.code, 'EMQ_ESTALE');
    return true;
  });
  await assert.rejects(new Queue('bad queue', { db }).add('x'), emq.InvalidQueue);
  await assert.rejects(q.getJobCounts('wait'), (e) => e instanceof emq.Refused &&
    e.message === 'unknown_state(wait)');
  // the handle stays usable
  assert.equal(await job.complete(), true);
});

test('the addon refuses one kind of handle passed for another', async (t) => {
  const native = require('../lib/native');
  const clock = native.clockNew(T0);
  const h = await native.open(':memory:', {}, clock);
  assert.throws(() => native.open(':memory:', {}, h), /clock: expected a FakeClock/);
  assert.throws(() => native.call(clock, 'pending_size', ['q']), /handle: expected an emqlite handle/);
  assert.throws(() => native.subTake(h, h), /sub: expected a subscription/);
  assert.equal(await native.call(h, 'pending_size', ['q']), 0);
  await native.close(h);
  await assert.rejects(native.call(h, 'pending_size', ['q']), /closed/);
});

test('a path that cannot be opened rejects the first call, naming it', async (t) => {
  const d = tmpdir(t);
  const db = new Database(d); // a directory
  await assert.rejects(db.opened(), (e) => e instanceof emq.CantOpen && e.message.includes(d));
  await db.close();
});

test('close() runs after the queued calls, and later calls are refused', async (t) => {
  const db = new Database(':memory:');
  const q = new Queue('mail', { db });
  const adds = [q.add('a'), q.add('b'), q.add('c')];
  const closed = db.close();
  assert.equal((await Promise.all(adds)).length, 3);
  await closed;
  await assert.rejects(q.add('d'), /closed/);
  await db.close(); // idempotent
});

test('a handle the program dropped is finalised by the garbage collector', async (t) => {
  assert.ok(global.gc, 'run with --expose-gc (npm test does)');
  const file = path.join(tmpdir(t), 'gc.db');
  // An exclusive handle locks every other open out until it is closed. Its
  // fake clock, still alive, must not keep it alive.
  const clock = new FakeClock(T0);
  await (async () => {
    const db = new Database(file, { exclusive: true, clock });
    await new Queue('mail', { db }).add('x');
    await assert.rejects(new Database(file, { busyTimeout: 0 }).opened(), emq.Busy);
  })();
  let ok = false;
  for (let i = 0; i < 50 && !ok; i++) {
    global.gc();
    await new Promise((r) => setImmediate(r));
    try {
      const db2 = await new Database(file, { busyTimeout: 0 }).opened();
      assert.equal(await new Queue('mail', { db: db2 }).count(), 1);
      await db2.close();
      ok = true;
    } catch (e) {
      if (!(e instanceof emq.Busy)) throw e;
    }
  }
  assert.ok(ok, 'the collected handle released the file');
  clock.advance(1); // a listener left by the collected database is harmless
});

test('add with delay and at schedules on the fake clock', async (t) => {
  const { db, clock } = testDb(t);
  const q = new Queue('mail', { db });
  const a = await q.add('later', { delay: 5000 });
  await q.add('at', { at: new Date(T0 + 9000) });
  assert.equal(await q.getJobState(a), 'scheduled');
  assert.equal(await q.claim(), null);
  clock.advance(5000);
  assert.equal(await q.promote(), 1);
  assert.equal((await q.claim()).id, a);
  clock.advance(4000);
  assert.equal((await q.next({ timeout: 0 })).text, 'at');
  assert.equal(await q.add('dup', { id: a }), null);
});

test('a job\'s history tells why it failed; the failures level', async (t) => {
  const { db, clock } = testDb(t);
  const q = new Queue('mail', { db });
  assert.equal(await db.historyLevel(), 'on');
  const id = await q.add('x');
  clock.advance(10);
  const job = await q.claim();
  assert.equal(await job.retry({ delay: 2000, maxAttempts: 2, error: 'smtp 421' }), 'scheduled');
  const h = await db.history(id);
  assert.deepEqual(h.map((e) => e.kind), ['enqueued', 'claimed', 'retried']);
  assert.equal(h[0].at, T0);
  assert.equal(h[0].attempts, null);
  assert.equal(h[1].attempts, 1);
  assert.equal(h[1].pid, process.pid);
  assert.ok(h[1].host);
  const r = h[2];
  assert.deepEqual([r.at, r.attempts, r.delay, r.runAt, r.queue, r.job],
    [T0 + 10, 1, 2000, T0 + 2010, 'mail', id]);
  assert.ok(Buffer.isBuffer(r.error) && r.error.toString() === 'smtp 421');
  assert.deepEqual((await db.history(id, { queue: 'mail' })).map((e) => e.seq), h.map((e) => e.seq));
  assert.deepEqual(await db.history(id, { queue: 'other' }), []);
  await db.setHistoryLevel('failures');
  assert.equal(await db.historyLevel(), 'failures');
  const ok = await q.add('y');
  const j = await q.claim();
  assert.equal(j.id, ok);
  assert.equal(await j.complete(), true);
  assert.deepEqual(await db.history(ok), []);
  await assert.rejects(db.setHistoryLevel('some'), emq.InvalidArgument);
  await db.setHistoryLevel('off');
  assert.equal(await db.historyLevel(), 'off');
});

test('the waiting claim resolves when another process enqueues', async (t) => {
  const file = path.join(tmpdir(t), 'wake.db');
  const db = new Database(file);
  const q = new Queue('mail', { db });
  await db.opened();
  const waiting = q.next({ lease: 5000, timeout: 20000 });
  const child = spawn(process.execPath, ['-e', `
    const { Queue } = require(${JSON.stringify(path.resolve(__dirname, '..'))});
    setTimeout(async () => {
      const q = new Queue('mail', { db: ${JSON.stringify(file)} });
      await q.add('from another process');
      await q.close();
    }, 300);`]);
  const started = Date.now();
  const job = await waiting;
  const took = Date.now() - started;
  await new Promise((r) => child.on('exit', r));
  assert.equal(job.text, 'from another process');
  assert.ok(took < 15000, `woken after ${took} ms`);
  await job.complete();
  await db.close();
});

test('a waiting claim yields to calls made meanwhile and ends on close', async (t) => {
  const db = new Database(':memory:');
  const q = new Queue('mail', { db });
  const waiting = q.next({ timeout: -1 });
  await new Promise((r) => setTimeout(r, 50));
  // a call queued behind the wait runs (the wait is interrupted, then
  // waits again), and its enqueue is claimed by the wait
  const id = await q.add('x');
  const job = await waiting;
  assert.equal(job.id, id);
  const again = q.next({ timeout: -1 });
  await new Promise((r) => setTimeout(r, 50));
  await db.close();
  assert.equal(await again, null);
});

test('Worker: completes, passes results, emits events, runs concurrently', async (t) => {
  const { db } = testDb(t);
  const q = new Queue('mail', { db });
  for (let i = 0; i < 6; i++) await q.add({ n: i });
  let inFlight = 0;
  let most = 0;
  const done = [];
  const worker = new Worker('mail', async (job) => {
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise((r) => setTimeout(r, 20));
    inFlight--;
    return job.data.n * 2;
  }, { db, concurrency: 3, pumpInterval: 0 });
  worker.on('completed', (job, result) => done.push(result));
  while (done.length < 6) await new Promise((r) => setTimeout(r, 10));
  await worker.close();
  assert.deepEqual(done.sort((a, b) => a - b), [0, 2, 4, 6, 8, 10]);
  assert.equal(most, 3);
  assert.deepEqual(await q.getJobCounts('pending', 'active', 'completed'),
    { pending: 0, active: 0, completed: 6 });
});

test('Worker: a thrown error retries under the policy with its stack, then dead-letters', async (t) => {
  const { db, clock } = testDb(t);
  const q = new Queue('mail', { db });
  await q.setRetryPolicy({ attempts: 2, backoff: { type: 'fixed', delay: 1000 } });
  const id = await q.add('boom');
  const verdicts = [];
  const worker = new Worker('mail', async () => {
    throw new Error('smtp 421');
  }, { db, pumpInterval: 0, waitTimeout: 50 });
  t.after(() => worker.close());
  worker.on('failed', (job, err, verdict) => verdicts.push(verdict));
  while (verdicts.length < 1) await new Promise((r) => setTimeout(r, 5));
  assert.equal(await q.getJobState(id), 'scheduled');
  const row = await q.getJob(id);
  assert.match(row.last_error.toString(), /^Error: smtp 421\n\s+at /);
  clock.advance(1000); // the backoff: the worker's wait wakes and promotes it
  while (verdicts.length < 2) await new Promise((r) => setTimeout(r, 5));
  await worker.close();
  assert.deepEqual(verdicts, ['scheduled', 'dead']);
  assert.equal(await q.getJobState(id), 'dead');
});

test('Worker: leases are extended while the processor runs', async (t) => {
  const { db, clock } = testDb(t);
  const q = new Queue('mail', { db });
  const id = await q.add('slow');
  let release;
  const gate = new Promise((r) => { release = r; });
  let started;
  const running = new Promise((r) => { started = r; });
  const worker = new Worker('mail', async () => { started(); await gate; return 'ok'; },
    { db, lease: 30000, extendInterval: 3600000, pumpInterval: 0 });
  await running;
  clock.advance(20000);
  assert.equal(await worker.extendLeases(), 1); // what the timer does
  clock.advance(20000); // 40 s after the claim: past the first lease
  assert.equal(await q.reap(), 0);
  const info = await q.inspect(id);
  assert.equal(Number(info.deadline), T0 + 20000 + 30000);
  release();
  await worker.close();
  assert.equal(await q.getJobState(id), 'absent');
});

test('Worker: close() waits for the jobs in hand', async (t) => {
  const { db } = testDb(t);
  const q = new Queue('mail', { db });
  await q.add('x');
  let finished = false;
  let started;
  const running = new Promise((r) => { started = r; });
  const worker = new Worker('mail', async () => {
    started();
    await new Promise((r) => setTimeout(r, 100));
    finished = true;
  }, { db, pumpInterval: 0 });
  await running;
  await worker.close();
  assert.equal(finished, true);
  assert.equal((await q.getJobCounts('completed')).completed, 1);
});

test('QueueEvents: completed, failed and progress from the event log of a file', async (t) => {
  const file = path.join(tmpdir(t), 'events.db');
  const db = new Database(file);
  const q = new Queue('mail', { db });
  const events = new QueueEvents('mail', { db: file });
  await events.waitUntilReady();
  const seen = [];
  for (const n of ['completed', 'failed', 'progress']) {
    events.on(n, (ev) => seen.push([n, ev.jobId, ev.failedReason ?? ev.data ?? null]));
  }
  const a = await q.add('a');
  const b = await q.add('b');
  const ja = await q.claim();
  await ja.updateProgress({ pct: 50 });
  await ja.complete();
  const jb = await q.claim();
  await jb.retry({ maxAttempts: 1, error: 'nope' });
  while (seen.length < 3) await new Promise((r) => setTimeout(r, 10));
  await events.close();
  await db.close();
  assert.deepEqual(seen, [['progress', a, { pct: 50 }], ['completed', a, null], ['failed', b, 'nope']]);
});

test('QueueEvents on an in-memory database', async (t) => {
  const { db } = testDb(t);
  const q = new Queue('mail', { db });
  const events = new QueueEvents('mail', { db });
  await events.waitUntilReady();
  const seen = [];
  events.on('completed', (ev) => seen.push(ev.jobId));
  const id = await q.add('a');
  await (await q.claim()).complete();
  await events.poll();
  await events.close();
  assert.deepEqual(seen, [id]);
});

test('operator reads, lanes, flows and streams', async (t) => {
  const { db } = testDb(t);
  const q = new Queue('mail', { db });
  const ids = await q.addBulk(['a', 'b', { payload: 'c' }]);
  assert.equal(ids.length, 3);
  assert.deepEqual((await q.list('pending')).map((m) => m.id), ids);
  assert.deepEqual(await q.browse(2), [ids[2], ids[1]]);
  await q.pause();
  assert.equal(await q.isPaused(), true);
  assert.equal(await q.claim(), null);
  await q.resume();
  assert.equal(await q.drain(), 3);
  // lanes
  const g1 = 'PRT0000000000A';
  const g2 = 'PRT0000000000B';
  await q.lane(g1).add('t1');
  await q.lane(g2).add('t2');
  assert.equal(await q.lane(g1).depth(), 1);
  const lanes = await q.lanes();
  assert.equal(lanes.total, 2);
  const lj = await q.claimLane();
  assert.ok([g1, g2].includes(lj.group));
  await lj.complete();
  // flows
  const tree = await q.addFlow({ payload: 'parent', children: [{ payload: 'c1' }, { payload: 'c2' }] });
  assert.equal(await q.getJobState(tree.id), 'awaiting_children');
  await drain(q, async (job) => `r-${job.text}`, { max: 2 });
  assert.equal(await q.getJobState(tree.id), 'pending');
  const vals = await q.getChildrenValues(tree.id);
  assert.equal(Object.keys(vals).length, 2);
  // streams
  const s = q.stream('audit');
  const e1 = await s.append({ user: 'ada', act: 'login' });
  await s.append(['user', 'bob']);
  assert.equal(await s.length(), 2);
  const rows = await s.read();
  assert.equal(rows[0].id, e1);
  // the generic verb call reaches every verb of the registry
  const names = Database.verbs().map((v) => v.name);
  for (const v of ['enqueue', 'flow_add', 'lane_claim', 'append', 'lanes']) assert.ok(names.includes(v));
  assert.deepEqual(await db.check(), { violations: 0, findings: (await db.check()).findings });
});

test('a job added with attempts and backoff keeps its own policy', async (t) => {
  const { db } = testDb(t);
  const q = new Queue('mail', { db });
  const id = await q.add('x', { attempts: 7, backoff: { type: 'exponential', delay: 500, cap: 8000 } });
  assert.deepEqual(await q.getRetryPolicy(id), { maxAttempts: 7, backoff: 'exponential:500:8000' });
  assert.equal(await q.getRetryPolicy(), null);
});

test('testing kit: drain runs ready jobs and retries failures on the fake clock', async (t) => {
  const { db, clock } = testDb(t);
  const q = new Queue('mail', { db });
  await q.setRetryPolicy({ attempts: 3, backoff: 1000 });
  await q.add('ok');
  await q.add('flaky');
  let tries = 0;
  const proc = async (job) => {
    if (job.text === 'flaky' && tries++ === 0) throw new Error('first time');
    return 'done';
  };
  assert.deepEqual(await drain(q, proc), { completed: 1, failed: 1 });
  clock.advance(1000);
  await q.promote();
  assert.deepEqual(await drain(q, proc), { completed: 1, failed: 0 });
  assert.equal(clock.now(), T0 + 1000);
  assert.ok(new FakeClock().now() === T0);
});

test('a file written from Node exports byte-identical to the same calls through the C API', async (t) => {
  const cli = process.env.EMQLITE_CLI;
  if (!cli || !fs.existsSync(cli)) {
    t.skip('EMQLITE_CLI does not name a built emqlite tool');
    return;
  }
  const d = tmpdir(t);
  const cpath = path.join(d, 'c.db');
  const Q = 'mail';
  const ID1 = 'JOB00000000001';
  const ID2 = 'JOB00000000002';
  const ID3 = 'JOB00000000003';
  const run = (now, ...args) => {
    const r = spawnSync(cli, ['--db', cpath, ...args],
      { env: { ...process.env, EMQLITE_NOW_MS: String(now) }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  };
  run(T0, 'enqueue', Q, 'one', '--id', ID1);
  run(T0, 'enqueue', Q, 'two', '--id', ID2);
  run(T0, 'enqueue', Q, 'three', '--id', ID3, '--in', '5000');
  run(T0 + 1, 'claim', Q, '--lease', '10000');
  run(T0 + 2, 'retry', Q, ID1, '1', '--delay', '100', '--max', '3', '--error', 'boom');
  run(T0 + 3, 'claim', Q, '--lease', '10000');
  run(T0 + 4, 'complete', Q, ID2, '1');
  const clock = new FakeClock(T0);
  const db = new Database(path.join(d, 'node.db'), { clock });
  const q = new Queue(Q, { db });
  await q.add('one', { id: ID1 });
  await q.add('two', { id: ID2 });
  await q.add('three', { id: ID3, delay: 5000 });
  clock.set(T0 + 1);
  const a = await q.claim({ lease: 10000 });
  clock.set(T0 + 2);
  await a.retry({ delay: 100, maxAttempts: 3, error: 'boom' });
  clock.set(T0 + 3);
  const b = await q.claim({ lease: 10000 });
  clock.set(T0 + 4);
  await b.complete();
  const mine = await db.export();
  await db.close();
  const c = new Database(cpath, { readonly: true });
  const theirs = await c.export();
  await c.close();
  assert.ok(mine.length > 100);
  assert.ok(mine.equals(theirs), 'the two exports differ');
});

test('index.d.ts type-checks an example with tsc --noEmit', (t) => {
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc', { paths: [path.resolve(__dirname, '..')] });
  } catch (e) {
    t.skip('typescript is not installed (npm install in bindings/node)');
    return;
  }
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '-p', path.resolve(__dirname, '..', 'examples')],
    { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
