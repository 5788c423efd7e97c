"""emqlite — the EchoMQ job-queue protocol as an embedded engine over one
SQLite file, for Python.

    import emqlite

    with emqlite.open("jobs.db") as db:
        mail = db.queue("mail")
        mail.enqueue(b'{"to": "ada@example.com"}')
        job = mail.claim(lease=30)           # seconds
        if job:
            ...                              # job.payload is bytes
            job.complete()

Every call is one atomic transition inside one SQLite transaction, with the
keys, fields, replies and error strings of the EchoMQ Valkey wire: an export
of the file replays into Valkey. Every verb of the protocol is reachable by
its wire name, `db.call("drain", "mail", True)` or `mail.drain(True)`, from
the library's verb registry, so verbs added to the C library need no binding
code.

Units. Durations (lease, delay, timeouts) are seconds (int or float) or
`datetime.timedelta`; instants are `datetime` (timezone-aware) or Unix
seconds; a clock callable returns Unix milliseconds (int), as the C API's.
Payloads are `bytes` (`str` is accepted and encoded as UTF-8).

Threads. A `Database` belongs to the thread that opened it; using it from
another thread raises `RuntimeError`. Open one handle per thread: any number
of handles, threads and processes may share one file.
"""
import datetime as _dt
import threading as _threading

from ._native import ffi as _ffi, lib as _lib

__all__ = [
    "open", "Database", "Queue", "Job", "FakeClock", "EmqError",
    "StaleToken", "WrongKind", "WrongType", "VersionFence", "InvalidQueue",
    "InvalidId", "InvalidArgument", "Busy", "EmqIOError", "DiskFull",
    "OutOfMemory", "NotEmqlite", "SchemaTooNew", "Corrupt", "TooBig",
    "ReadOnly", "CantOpen", "Malformed", "Internal", "EmptyBatch",
    "NotSupported", "Locked", "NotPaused", "ActiveJobs", "NotDead",
    "RateLimited", "Refused", "NonMonotonic", "EngineError", "Verb",
    "verbs", "version", "sqlite_version", "slot", "WIRE",
]

#: The library's version; the binding's version is the same string.
__version__ = _ffi.string(_lib.emq_version()).decode()
#: The wire identity the library speaks (stored at "{emq}:version").
WIRE = "echomq:4.0.0"


def version():
    """The C library's version."""
    return __version__


def sqlite_version():
    """The version of the SQLite linked into the extension."""
    return _ffi.string(_lib.emq_sqlite_version()).decode()


def slot(key):
    """The Valkey Cluster slot of `key` (bytes or str)."""
    b = _bytes(key)
    return _lib.emq_slot(b, len(b))


# ---------------------------------------------------------------- errors

class EmqError(Exception):
    """A failure of an emqlite call. `str(e)` is the library's message —
    for wire errors the exact wire string ("EMQSTALE complete token
    mismatch"); `code` is the C result code (a negative EMQ_E* value)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class StaleToken(EmqError):
    """EMQSTALE: the token does not match the job's attempts, or (retry,
    delay) the job is gone."""


class WrongKind(EmqError):
    """EMQKIND: the job id is well-formed but not JOB-namespaced."""


class WrongType(EmqError):
    """WRONGTYPE: a key holds another kind of value."""


class VersionFence(EmqError):
    """The file is stamped with another wire identity."""


class InvalidQueue(EmqError, ValueError):
    """The queue name fails the queue gate ([A-Za-z0-9._-]{1,128}, not
    'emq')."""


class InvalidId(EmqError, ValueError):
    """Not a valid branded id (or group id)."""


class InvalidArgument(EmqError, ValueError):
    """A refused argument (the message names it)."""


class Busy(EmqError):
    """The file stayed locked past the busy timeout."""


class EmqIOError(EmqError, OSError):
    """An I/O error; nothing was applied."""


class DiskFull(EmqError, OSError):
    """Disk or quota full; nothing was applied."""


class OutOfMemory(EmqError, MemoryError):
    """Out of memory; nothing was applied."""


class NotEmqlite(EmqError):
    """The file is not an emqlite file (left untouched)."""


class SchemaTooNew(EmqError):
    """The file has a newer schema (left untouched)."""


class Corrupt(EmqError):
    """The file is damaged."""


class TooBig(EmqError, ValueError):
    """A payload exceeds the configured maximum."""


class ReadOnly(EmqError):
    """The file, its directory or the handle does not allow writes."""


class CantOpen(EmqError, OSError):
    """The file cannot be opened."""


class Malformed(EmqError, ValueError):
    """Malformed input (an import stream, a number)."""


class Internal(EmqError):
    """An unexpected SQLite error."""


class EmptyBatch(EmqError, ValueError):
    """An empty batch (empty_pipeline)."""


class NotSupported(EmqError):
    """The feature was not built in."""


class Locked(EmqError):
    """EMQLOCK: the job is locked."""


class NotPaused(EmqError):
    """EMQSTATE not paused (obliterate needs a paused queue)."""


class ActiveJobs(EmqError):
    """EMQSTATE active jobs present (obliterate without force)."""


class NotDead(EmqError):
    """EMQSTATE not dead (reprocess)."""


class RateLimited(EmqError):
    """EMQRATE: at the concurrency ceiling."""


class Refused(EmqError):
    """A host refusal of the protocol (unknown_state(name),
    flow_too_deep(8), ...): `str(e)` is its exact text."""


class NonMonotonic(EmqError):
    """A stream append whose id is not above the stream's top."""


class EngineError(EmqError):
    """Another engine error reply (ERR ..., BUSYGROUP, NOGROUP), verbatim."""


def _code(name):
    return getattr(_lib, name, None)


_ERRORS = {}
for _name, _cls in [
        ("EMQ_EKIND", WrongKind), ("EMQ_ESTALE", StaleToken),
        ("EMQ_EWRONGTYPE", WrongType), ("EMQ_EWIRE", VersionFence),
        ("EMQ_EQUEUE", InvalidQueue), ("EMQ_EID", InvalidId),
        ("EMQ_EINVAL", InvalidArgument), ("EMQ_EBUSY", Busy),
        ("EMQ_EIO", EmqIOError), ("EMQ_EFULL", DiskFull),
        ("EMQ_ENOMEM", OutOfMemory), ("EMQ_ENOTEMQ", NotEmqlite),
        ("EMQ_ESCHEMA", SchemaTooNew), ("EMQ_ECORRUPT", Corrupt),
        ("EMQ_ETOOBIG", TooBig), ("EMQ_EREADONLY", ReadOnly),
        ("EMQ_ECANTOPEN", CantOpen), ("EMQ_EPROTO", Malformed),
        ("EMQ_EINTERNAL", Internal), ("EMQ_EEMPTY", EmptyBatch),
        ("EMQ_ENOTSUP", NotSupported), ("EMQ_ELOCKED", Locked),
        ("EMQ_ENOTPAUSED", NotPaused), ("EMQ_EACTIVE", ActiveJobs),
        ("EMQ_ENOTDEAD", NotDead), ("EMQ_ERATE", RateLimited),
        ("EMQ_EREFUSED", Refused), ("EMQ_ENONMONO", NonMonotonic),
        ("EMQ_EENGINE", EngineError)]:
    if _code(_name) is not None:
        _ERRORS[_code(_name)] = _cls


def _error(code, message):
    if not message:
        message = _ffi.string(_lib.emq_strerror(code)).decode()
    return _ERRORS.get(code, EmqError)(code, message)


# ------------------------------------------------------------- conversions

def _bytes(v):
    if isinstance(v, bytes):
        return v
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, str):
        return v.encode("utf-8")
    raise TypeError("expected bytes or str, not %s" % type(v).__name__)


def _ms(v, what):
    """A duration in seconds (or a timedelta) as integer milliseconds."""
    if isinstance(v, _dt.timedelta):
        return int(round(v.total_seconds() * 1000))
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("%s: a duration in seconds or a timedelta" % what)
    return int(round(v * 1000))


def _instant_ms(v, what):
    """An instant (aware datetime or Unix seconds) as Unix milliseconds."""
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            raise ValueError("%s: a naive datetime has no time zone" % what)
        return int(round(v.timestamp() * 1000))
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("%s: a datetime or Unix seconds" % what)
    return int(round(v * 1000))


def _arg(v):
    """A verb argument as bytes (None stays None: an absent argument)."""
    if v is None:
        return None
    if isinstance(v, bool):
        return b"1" if v else b"0"
    if isinstance(v, int):
        return str(v).encode()
    return _bytes(v)


def _key(r):
    s = _ffi.buffer(r.str, r.len)[:] if r.str != _ffi.NULL else b""
    try:
        return s.decode("utf-8")
    except UnicodeDecodeError:
        return s


def _value(r):
    """A wire reply as a Python value: int, bytes, None, list, dict, bool;
    an error or refusal reply inside an array becomes an EmqError."""
    t = r.type
    if t == _lib.EMQ_REPLY_NIL:
        return None
    if t == _lib.EMQ_REPLY_INT:
        return int(r.integer)
    if t == _lib.EMQ_REPLY_BOOL:
        return bool(r.integer)
    if t in (_lib.EMQ_REPLY_BULK, _lib.EMQ_REPLY_STATUS):
        return _ffi.buffer(r.str, r.len)[:]
    if t in (_lib.EMQ_REPLY_ERROR, _lib.EMQ_REPLY_REFUSED):
        return EmqError(0, _ffi.buffer(r.str, r.len)[:].decode(
            "utf-8", "replace"))
    if t == _lib.EMQ_REPLY_ARRAY:
        return [_value(r.elem[i]) for i in range(r.n)]
    if t == _lib.EMQ_REPLY_MAP:
        return {_key(r.elem[i]): _value(r.elem[i + 1])
                for i in range(0, r.n - 1, 2)}
    raise Internal(0, "unknown reply type %d" % t)


# ------------------------------------------------------------ the registry

class Verb:
    """A row of the library's verb registry: `name` (the wire name), `tier`,
    `kind` ("write", "read", "procedure", "host"), `args` (a list of
    (name, optional, repeated)), `summary`."""

    def __init__(self, info):
        self.name = _ffi.string(info.name).decode()
        self.id = info.id
        self.tier = info.tier
        self.kind = {_lib.EMQ_VERB_WRITE: "write", _lib.EMQ_VERB_READ: "read",
                     _lib.EMQ_VERB_PROC: "procedure",
                     _lib.EMQ_VERB_HOST: "host"}.get(info.kind, "?")
        self.args = [(_ffi.string(info.args[i].name).decode(),
                      bool(info.args[i].flags & _lib.EMQ_ARGF_OPT),
                      bool(info.args[i].flags & _lib.EMQ_ARGF_REST))
                     for i in range(info.nargs)]
        self.summary = _ffi.string(info.summary).decode()

    def __repr__(self):
        return "<Verb %s(%s)>" % (self.name, ", ".join(a[0] for a in self.args))

    def build(self, args, kwargs):
        """The argv of this verb from Python positional and keyword
        arguments (keyword names as the registry names them; a repeated
        tail `pairs.id, pairs.token` takes `pairs=[(id, token), ...]`, a
        tail `names` takes `names=[...]`; extra positionals fill the tail
        flat)."""
        fixed = [a for a in self.args if not a[2]]
        rest = [a for a in self.args if a[2]]
        argv = []
        args = list(args)
        for name, optional, _ in fixed:
            base, _, field = name.partition(".")
            if args:
                argv.append(args.pop(0))
            elif name in kwargs:
                argv.append(kwargs.pop(name))
            elif field and base in kwargs:
                seq = kwargs[base]
                k = [a[0] for a in fixed if a[0].startswith(base + ".")]
                argv.append(seq[k.index(name)])
            elif optional:
                argv.append(None)
            else:
                raise TypeError("%s() missing argument %r" % (self.name, name))
        for a in fixed:
            kwargs.pop(a[0].partition(".")[0], None)
        if rest:
            base = rest[0][0].partition(".")[0]
            if base in kwargs:
                for item in kwargs.pop(base):
                    argv.extend(item if len(rest) > 1 else [item])
            argv.extend(args)
            args = []
        if args or kwargs:
            raise TypeError("%s() got unexpected arguments %r" % (
                self.name, list(kwargs) or args))
        while argv and argv[-1] is None:
            argv.pop()
        return argv


def verbs():
    """Every verb of the registry, in registry order."""
    return [Verb(_lib.emq_verb_at(i)) for i in range(_lib.emq_verb_count())]


_VERBS = {}


def _verb(name):
    v = _VERBS.get(name)
    if v is None:
        info = _lib.emq_verb_find(name.encode())
        if info == _ffi.NULL:
            return None
        v = _VERBS[name] = Verb(info)
    return v


# ----------------------------------------------------------------- clocks

class FakeClock:
    """A clock for tests: it starts at `start_ms` (Unix milliseconds; the
    default is 2026-01-01T00:00:00Z) and moves only when told to."""

    def __init__(self, start_ms=1767225600000):
        self.now_ms = int(start_ms)

    def __call__(self):
        return self.now_ms

    def advance(self, ms=0, *, seconds=0):
        """Move forward by `ms` milliseconds (and/or `seconds`); returns the
        new time."""
        self.now_ms += int(ms) + int(round(seconds * 1000))
        return self.now_ms

    def set(self, ms):
        self.now_ms = int(ms)


_last_clock_error = _threading.local()


@_ffi.def_extern(onerror=lambda *exc: _clock_failed(exc))
def _emq_py_clock(ctx):
    return int(_ffi.from_handle(ctx)._clock())


def _clock_failed(exc):
    # The library then fails the transition before it touches anything.
    _last_clock_error.exc = exc[1]
    return _lib.EMQ_CLOCK_FAILED


# ---------------------------------------------------------------- handles

_SYNC = {"normal": 1, "full": 2}


def open(path=":memory:", *, clock=None, sync="normal", busy_timeout=5.0,
         node_id=None, readonly=False, exclusive=False, max_payload=None,
         checkpoint_frames=None):
    """Open (creating if absent) the emqlite file at `path` (":memory:" for
    a private in-memory database) and pass the version fence. `clock` is a
    callable returning Unix ms (a FakeClock in tests); `sync` "normal" or
    "full"; `busy_timeout` in seconds. Returns a Database (also a context
    manager)."""
    return Database(path, clock=clock, sync=sync, busy_timeout=busy_timeout,
                    node_id=node_id, readonly=readonly, exclusive=exclusive,
                    max_payload=max_payload,
                    checkpoint_frames=checkpoint_frames)


class Database:
    """An open emqlite file. Not thread-safe: one per thread."""

    def __init__(self, path, *, clock=None, sync="normal", busy_timeout=5.0,
                 node_id=None, readonly=False, exclusive=False,
                 max_payload=None, checkpoint_frames=None):
        self._db = None
        self._owner = _threading.get_ident()
        self._clock = clock
        self._self_handle = _ffi.new_handle(self)
        o = _ffi.new("emq_options *")
        _lib.emq_options_init_size(o, _ffi.sizeof("emq_options"))
        if sync not in _SYNC:
            raise ValueError("sync must be 'normal' or 'full'")
        o.synchronous = _SYNC[sync]
        o.busy_timeout_ms = _ms(busy_timeout, "busy_timeout")
        if node_id is not None:
            o.node_id = int(node_id)
        o.readonly = 1 if readonly else 0
        o.exclusive = 1 if exclusive else 0
        if max_payload is not None:
            o.max_payload = int(max_payload)
        if checkpoint_frames is not None:
            o.checkpoint_frames = int(checkpoint_frames)
        if clock is not None:
            if not callable(clock):
                raise TypeError("clock must be a callable returning Unix ms")
            o.clock = _lib._emq_py_clock
            o.clock_ctx = self._self_handle
        out = _ffi.new("emq_db **")
        err = _ffi.new("char[]", 512)
        rc = _lib.emq_open_ex(_bytes(str(path)), o, out, err, 512)
        if rc != 0:
            raise _error(rc, _ffi.string(err).decode("utf-8", "replace"))
        self._db = out[0]
        self.path = str(path)

    # -- lifecycle
    def close(self):
        """Close the handle (idempotent)."""
        if self._db is not None:
            self._check_thread()
            _lib.emq_close(self._db)
            self._db = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_db", None) is not None and \
                _threading.get_ident() == self._owner:
            _lib.emq_close(self._db)
            self._db = None

    def _check_thread(self):
        if _threading.get_ident() != self._owner:
            raise RuntimeError("an emqlite Database belongs to the thread "
                               "that opened it; open one per thread")
        if self._db is None:
            raise ValueError("the database is closed")

    def _raise(self, rc):
        exc = getattr(_last_clock_error, "exc", None)
        if exc is not None:
            _last_clock_error.exc = None
            raise exc
        raise _error(rc, _ffi.string(_lib.emq_errmsg(self._db)).decode(
            "utf-8", "replace"))

    def _ok(self, rc):
        exc = getattr(_last_clock_error, "exc", None)
        if exc is not None:
            _last_clock_error.exc = None
            raise exc
        if rc < 0:
            self._raise(rc)
        return rc

    # -- basics
    @property
    def node_id(self):
        """The node id (0..1023) this handle mints with."""
        return _lib.emq_node_id(self._db)

    def now(self):
        """The handle's clock, Unix ms."""
        self._check_thread()
        return _lib.emq_now(self._db)

    def mint(self, namespace="JOB"):
        """A fresh branded id in `namespace`."""
        self._check_thread()
        out = _ffi.new("char[15]")
        self._ok(_lib.emq_mint(self._db, _bytes(namespace), out))
        return _ffi.string(out).decode()

    def queue(self, name):
        """The queue `name` on this database (no I/O)."""
        return Queue(self, name)

    def checkpoint(self):
        self._check_thread()
        self._ok(_lib.emq_checkpoint(self._db))

    # -- the registry
    def call(self, verb, *args, **kwargs):
        """Run any registered verb by its wire name; returns its reply as a
        Python value (see `_value`), raises EmqError on a failure or a wire
        error."""
        self._check_thread()
        v = _verb(verb)
        if v is None:
            raise InvalidArgument(_lib.EMQ_EINVAL, "unknown verb %r" % verb)
        return self._call(v, v.build(args, kwargs))[1]

    def _call(self, v, argv):
        n = len(argv)
        keep = [_arg(a) for a in argv]
        cargv = _ffi.new("char *[]", max(n, 1))
        clen = _ffi.new("size_t[]", max(n, 1))
        bufs = []
        for i, a in enumerate(keep):
            if a is None:
                cargv[i] = _ffi.NULL
            else:
                b = _ffi.new("char[]", a)
                bufs.append(b)
                cargv[i] = b
                clen[i] = len(a)
        r = _ffi.new("emq_reply *")
        try:
            rc = _lib.emq_call(self._db, v.name.encode(), n, cargv, clen, r)
            if rc < 0:
                self._raise(rc)
            self._ok(0)
            return rc, _value(r)
        finally:
            _lib.emq_reply_clear(r)

    # -- reads
    def queues(self):
        """The queues with keys in the file, in byte order."""
        self._check_thread()
        out = _ffi.new("char ***")
        n = _ffi.new("size_t *")
        self._ok(_lib.emq_queues(self._db, out, n))
        try:
            return [_ffi.string(out[0][i]).decode() for i in range(n[0])]
        finally:
            _lib.emq_queues_free(out[0], n[0])

    def stats(self, queue):
        """The figures of `queue`: a dict of pending, active, scheduled,
        dead, completed, failed (ints) and paused (bool)."""
        self._check_thread()
        st = _ffi.new("emq_stats *")
        self._ok(_lib.emq_stats_get(self._db, _bytes(queue), st))
        return {"pending": st.pending, "active": st.active,
                "scheduled": st.scheduled, "dead": st.dead,
                "completed": st.completed, "failed": st.failed,
                "paused": bool(st.paused)}

    def check(self):
        """Check the file's invariants: a list of (severity, code, key,
        message) findings, severity "violation" or "note" (an empty list for
        a clean file)."""
        self._check_thread()
        found = []

        @_ffi.callback("void(void *, const emq_finding *)")
        def cb(ctx, f):
            found.append(("violation" if f.severity == 1 else "note",
                          _ffi.string(f.code).decode(),
                          _ffi.string(f.key).decode("utf-8", "replace"),
                          _ffi.string(f.message).decode("utf-8", "replace")))

        nv = _ffi.new("size_t *")
        rc = _lib.emq_check(self._db, cb, _ffi.NULL, nv)
        if rc < 0 and rc != _lib.EMQ_ECORRUPT:
            self._raise(rc)
        return found

    # -- moving data
    def export(self, queues=None, by_slot=False):
        """The file's keyspace as a RESP command stream (bytes) that
        `redis-cli --pipe` replays into Valkey."""
        self._check_thread()
        chunks = []

        @_ffi.callback("int(void *, const void *, size_t)")
        def sink(ctx, p, n):
            chunks.append(_ffi.buffer(p, n)[:])
            return 0

        o = _ffi.new("emq_export_options *")
        _lib.emq_export_options_init_size(
            o, _ffi.sizeof("emq_export_options"))
        keep = []
        if queues:
            arr = _ffi.new("char *[]", len(queues))
            for i, q in enumerate(queues):
                b = _ffi.new("char[]", _bytes(q))
                keep.append(b)
                arr[i] = b
            o.queues = arr
            o.n_queues = len(queues)
        o.by_slot = 1 if by_slot else 0
        s = _ffi.new("emq_transfer_summary *")
        self._ok(_lib.emq_export(self._db, o, sink, _ffi.NULL, s))
        return b"".join(chunks)

    def import_(self, data):
        """Apply a RESP command stream (an export) in one transaction; returns
        a dict of keys, commands, bytes, digest."""
        self._check_thread()
        b = _bytes(data)
        s = _ffi.new("emq_transfer_summary *")
        self._ok(_lib.emq_import(self._db, b, len(b), s))
        return {"keys": s.keys, "commands": s.commands, "bytes": s.bytes,
                "digest": s.digest}

    def digest(self):
        """The logical digest of the file's keyspace (an int)."""
        self._check_thread()
        s = _ffi.new("emq_transfer_summary *")
        self._ok(_lib.emq_digest(self._db, _ffi.NULL, s))
        return s.digest


class Job:
    """A claimed job: `id`, `attempts` (the fencing token), `payload`
    (bytes), `queue`. Settle it with complete(), retry() or extend()."""

    __slots__ = ("queue", "id", "attempts", "payload")

    def __init__(self, queue, id, attempts, payload):
        self.queue = queue
        self.id = id
        self.attempts = attempts
        self.payload = payload

    @property
    def text(self):
        """The payload decoded as UTF-8."""
        return self.payload.decode("utf-8")

    def __repr__(self):
        return "<Job %s attempts=%d %r>" % (self.id, self.attempts,
                                           self.payload[:40])

    def complete(self, result=None):
        """Complete the job (T1.5); True, or False when its row is gone."""
        return self.queue.complete(self.id, self.attempts, result)

    def retry(self, delay=1.0, max_attempts=3, error=b""):
        """Fail this attempt (T1.6): "scheduled" or "dead"."""
        return self.queue.retry(self.id, self.attempts, delay=delay,
                                max_attempts=max_attempts, error=error)

    def extend(self, lease):
        """Extend the lease to now + `lease` (T1.11); False when gone."""
        return self.queue.extend(self.id, self.attempts, lease)


class Queue:
    """A queue of a Database. Every registry verb whose first argument is
    the queue is also a method: `q.drain(True)`, `q.counts(names=[...])`."""

    def __init__(self, db, name):
        self.db = db
        self.name = name
        self._q = _bytes(name)

    def __repr__(self):
        return "<Queue %s>" % self.name

    def __getattr__(self, verb):
        v = _verb(verb)
        if v is None or not v.args or v.args[0][0] not in ("q", "cq"):
            raise AttributeError(verb)

        def method(*args, **kwargs):
            return self.db.call(verb, self.name, *args, **kwargs)
        method.__doc__ = v.summary
        method.__name__ = verb
        return method

    # -- admissions
    def enqueue(self, payload, id=None, at=None, delay=None):
        """Admit a job (T1.1; T1.3 with `at` or `delay`). Returns its id, or
        None when a row with that id already exists (a duplicate: nothing
        changed)."""
        db = self.db
        db._check_thread()
        if id is None:
            id = db.mint("JOB")
        p = _bytes(payload)
        bid = _bytes(id)
        if at is not None and delay is not None:
            raise ValueError("give at or delay, not both")
        if at is not None:
            rc = _lib.emq_enqueue_at(db._db, self._q, bid, p, len(p),
                                     _instant_ms(at, "at"))
        elif delay is not None:
            rc = _lib.emq_enqueue_in(db._db, self._q, bid, p, len(p),
                                     _ms(delay, "delay"))
        else:
            rc = _lib.emq_enqueue(db._db, self._q, bid, p, len(p))
        db._ok(rc)
        return None if rc == _lib.EMQ_DUPLICATE else (
            id if isinstance(id, str) else id.decode())

    def enqueue_many(self, payloads):
        """Enqueue (payload) or (id, payload) items in one transaction; a
        list of verdicts: the id, or None for a duplicate. A WrongKind item
        raises nothing: its verdict is the WrongKind exception."""
        db = self.db
        db._check_thread()
        items = []
        for it in payloads:
            if isinstance(it, tuple):
                items.append((_bytes(it[0]), _bytes(it[1])))
            else:
                items.append((_bytes(db.mint("JOB")), _bytes(it)))
        n = len(items)
        arr = _ffi.new("emq_item[]", max(n, 1))
        keep = []
        for i, (iid, p) in enumerate(items):
            ci, cp = _ffi.new("char[]", iid), _ffi.new("char[]", p)
            keep += [ci, cp]
            arr[i].id, arr[i].payload, arr[i].len = ci, cp, len(p)
        v = _ffi.new("int[]", max(n, 1))
        db._ok(_lib.emq_enqueue_many(db._db, self._q, arr, n, v))
        out = []
        for i in range(n):
            if v[i] == _lib.EMQ_ENQUEUED:
                out.append(items[i][0].decode())
            elif v[i] == _lib.EMQ_DUPLICATE:
                out.append(None)
            else:
                out.append(WrongKind(v[i], "EMQKIND job id must be "
                                           "JOB-namespaced"))
        return out

    # -- the worker's calls
    def claim(self, lease=30):
        """Claim the oldest pending job with a lease of `lease` seconds
        (T1.4): a Job, or None when nothing is pending or the queue is
        paused."""
        db = self.db
        db._check_thread()
        job = _ffi.new("emq_job *")
        rc = db._ok(_lib.emq_claim(db._db, self._q, _ms(lease, "lease"), job))
        if rc == _lib.EMQ_EMPTY:
            return None
        try:
            payload = (_ffi.buffer(job.payload, job.payload_len)[:]
                       if job.payload != _ffi.NULL else None)
            return Job(self, _ffi.string(job.id).decode(), job.attempts,
                       payload)
        finally:
            _lib.emq_job_clear(job)

    def complete(self, id, token, result=None):
        """T1.5: True when completed, False when the row is gone; raises
        StaleToken on a token mismatch."""
        db = self.db
        db._check_thread()
        if result is None:
            rc = _lib.emq_complete(db._db, self._q, _bytes(id), int(token))
        else:
            r = _bytes(result)
            rc = _lib.emq_complete_result(db._db, self._q, _bytes(id),
                                          int(token), r, len(r))
        return db._ok(rc) == _lib.EMQ_OK

    def retry(self, id, token, delay=1.0, max_attempts=3, error=b""):
        """T1.6: "scheduled" (again in `delay` seconds) or "dead" (at the
        attempts cap); raises StaleToken."""
        db = self.db
        db._check_thread()
        e = _bytes(error)
        rc = db._ok(_lib.emq_retry(db._db, self._q, _bytes(id), int(token),
                                   _ms(delay, "delay"), int(max_attempts), e,
                                   len(e)))
        return "dead" if rc == _lib.EMQ_DEAD else "scheduled"

    def extend(self, id, token, lease):
        """T1.11: True, or False when the row is gone; raises StaleToken."""
        db = self.db
        db._check_thread()
        return db._ok(_lib.emq_lock_extend(db._db, self._q, _bytes(id),
                                           int(token), _ms(lease, "lease"))
                      ) == _lib.EMQ_OK

    def promote(self, batch=100):
        """T1.7: move up to `batch` due scheduled jobs to pending; the
        count."""
        return self.db.call("promote", self.name, int(batch))

    def reap(self):
        """T1.8: return up to 100 lapsed leases to pending; the count."""
        return self.db.call("reap", self.name)

    def pause(self):
        self.db.call("set_paused", self.name)

    def resume(self):
        self.db.call("clear_paused", self.name)

    # -- reads
    def browse(self, n=10):
        """The newest `n` pending ids, newest first."""
        return [b.decode() for b in self.db.call("browse", self.name, int(n))]

    def pending_size(self):
        return self.db.call("pending_size", self.name)

    def stats(self):
        return self.db.stats(self.name)

    def job(self, id):
        """The fields of job `id`'s row (dict of str -> bytes), or None."""
        db = self.db
        db._check_thread()
        f = _ffi.new("emq_field **")
        n = _ffi.new("size_t *")
        rc = db._ok(_lib.emq_job_get(db._db, self._q, _bytes(id), f, n))
        if rc == _lib.EMQ_GONE:
            return None
        try:
            return {_ffi.buffer(f[0][i].name, f[0][i].name_len)[:].decode(
                        "utf-8", "replace"):
                    _ffi.buffer(f[0][i].value, f[0][i].value_len)[:]
                    for i in range(n[0])}
        finally:
            _lib.emq_fields_free(f[0], n[0])
