'use strict';
// emqlite — the EchoMQ job-queue protocol as an embedded engine over one
// SQLite file, for Node.js: durable, serverless, shared by any number of
// processes. See doc/NODE.md.
const native = require('./native');
const errors = require('./errors');
const { Database, FakeClock, Subscription } = require('./database');
const { Queue, Job, Lane, Stream } = require('./queue');
const { Worker } = require('./worker');
const { QueueEvents } = require('./events');

const v = native.version();

/** Open a Database and wait until it is open. */
function open(path = ':memory:', opts = {}) {
  return new Database(path, opts).opened();
}

module.exports = {
  open,
  Database,
  FakeClock,
  Subscription,
  Queue,
  Job,
  Lane,
  Stream,
  Worker,
  QueueEvents,
  verbs: () => native.verbs(),
  version: v.library,
  sqliteVersion: v.sqlite,
  WIRE: v.wire,
  errors,
  ...errors,
};
