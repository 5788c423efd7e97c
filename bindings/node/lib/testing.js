'use strict';
// testing.js — support for application tests with node:test (or any
// runner): an in-memory database driven by a fake clock, so leases,
// retries, backoff and schedules are checked without sleeping.
//
//   const { test } = require('node:test');
//   const { testDb } = require('emqlite/testing');
//   test('a failed send is retried after the backoff', async (t) => {
//     const { db, clock } = testDb(t);          // closed when t ends
//     ...
//     clock.advance(1000);
//   });
const { Database, FakeClock, DEFAULT_START_MS } = require('./database');
const { Queue } = require('./queue');

/** A FakeClock at `startMs` (2026-01-01T00:00:00Z by default). */
function fakeClock(startMs = DEFAULT_START_MS) {
  return new FakeClock(startMs);
}

/** An in-memory Database on a FakeClock: {db, clock}. With a node:test
 *  context `t` the database is closed when the test ends. */
function testDb(t, { startMs = DEFAULT_START_MS, ...opts } = {}) {
  const clock = new FakeClock(startMs);
  const db = new Database(':memory:', { ...opts, clock });
  if (t && typeof t.after === 'function') t.after(() => db.close());
  return { db, clock };
}

/** Run the jobs of `queue` that are ready now through `processor`, one at
 *  a time, the way a Worker would (complete on success, retry under the
 *  policy with the error's stack on failure), without timers: the
 *  deterministic drive for tests. Resolves to {completed, failed}. */
async function drain(queue, processor, { lease = 30000, max = Infinity } = {}) {
  const { errorText } = require('./worker');
  let completed = 0;
  let failed = 0;
  while (completed + failed < max) {
    const job = await queue.claim({ lease });
    if (!job) break;
    let result;
    try {
      result = await processor(job);
    } catch (e) {
      await job.retryByPolicy(errorText(e));
      failed++;
      continue;
    }
    await job.complete(result === undefined ? null
      : typeof result === 'string' || result instanceof Uint8Array ? result : JSON.stringify(result));
    completed++;
  }
  return { completed, failed };
}

module.exports = { fakeClock, testDb, drain, FakeClock, Database, Queue };
