'use strict';
// errors.js — the error classes, one per wire class and per emqlite code.
// Every rejection of the package is an EmqError: `message` is the library's
// message (for wire errors the exact wire string, "EMQSTALE complete token
// mismatch"), `code` the EMQ_E* name, `rc` the C result code.

class EmqError extends Error {
  constructor(message, code, rc) {
    super(message);
    this.name = this.constructor.name;
    this.code = code;
    this.rc = rc;
  }
}

const classes = {};
const byCode = {};

function def(name, code, doc) {
  const C = { [name]: class extends EmqError {} }[name];
  Object.defineProperty(C, 'description', { value: doc });
  classes[name] = C;
  byCode[code] = C;
}

def('StaleToken', 'EMQ_ESTALE', 'EMQSTALE: token mismatch, or the job is gone');
def('WrongKind', 'EMQ_EKIND', 'EMQKIND: the id is not JOB-namespaced');
def('WrongType', 'EMQ_EWRONGTYPE', 'WRONGTYPE: a key holds another type');
def('VersionFence', 'EMQ_EWIRE', 'the file is stamped with another wire identity');
def('InvalidQueue', 'EMQ_EQUEUE', 'the queue name fails the queue gate');
def('InvalidId', 'EMQ_EID', 'not a valid branded id (or group id)');
def('InvalidArgument', 'EMQ_EINVAL', 'a refused argument (the message names it)');
def('Busy', 'EMQ_EBUSY', 'the file stayed locked past the busy timeout');
def('IOError', 'EMQ_EIO', 'an I/O error; nothing was applied');
def('DiskFull', 'EMQ_EFULL', 'disk or quota full; nothing was applied');
def('OutOfMemory', 'EMQ_ENOMEM', 'out of memory; nothing was applied');
def('NotEmqlite', 'EMQ_ENOTEMQ', 'the file is not an emqlite file');
def('SchemaTooNew', 'EMQ_ESCHEMA', 'the file has a newer schema');
def('Corrupt', 'EMQ_ECORRUPT', 'the file is damaged');
def('TooBig', 'EMQ_ETOOBIG', 'a payload exceeds the configured maximum');
def('ReadOnly', 'EMQ_EREADONLY', 'the file or its directory is read-only');
def('CantOpen', 'EMQ_ECANTOPEN', 'the file cannot be opened');
def('Malformed', 'EMQ_EPROTO', 'malformed input (an import stream, a number)');
def('Internal', 'EMQ_EINTERNAL', 'an unexpected SQLite error');
def('EmptyBatch', 'EMQ_EEMPTY', 'an empty batch (empty_pipeline)');
def('NotSupported', 'EMQ_ENOTSUP', 'the feature was not built in');
def('Locked', 'EMQ_ELOCKED', 'EMQLOCK: the job is locked');
def('NotPaused', 'EMQ_ENOTPAUSED', 'EMQSTATE not paused');
def('ActiveJobs', 'EMQ_EACTIVE', 'EMQSTATE active jobs present');
def('NotDead', 'EMQ_ENOTDEAD', 'EMQSTATE not dead');
def('RateLimited', 'EMQ_ERATE', 'EMQRATE: at the concurrency ceiling');
def('Refused', 'EMQ_EREFUSED', 'a host refusal (unknown_state(name), flow_too_deep(8), ...)');
def('NonMonotonic', 'EMQ_ENONMONO', 'a stream id not above the stream top');
def('EngineError', 'EMQ_EENGINE', 'another engine error reply, verbatim');
def('Exhausted', 'EMQ_EEXHAUSTED', 'no branded id is left to mint');

// A native rejection (an Error with .code and .rc) as its class.
function wrap(e) {
  if (e instanceof EmqError || !e || typeof e.code !== 'string' ||
      !e.code.startsWith('EMQ_')) return e;
  const C = byCode[e.code] || EmqError;
  const w = new C(e.message, e.code, e.rc);
  return w;
}

module.exports = { EmqError, wrap, ...classes };
