"""emqlite — the EchoMQ job-queue protocol as an embedded engine over one
SQLite file, for Python.

    import emqlite

    with emqlite.open("jobs.db") as db:
        mail = db.queue("mail")
        mail.enqueue(b'{"to": "ada@example.com"}')
        job = mail.claim(lease=30, wait=5)   # seconds; waits up to 5 s
        if job:
            ...                              # job.payload is bytes
            job.complete()

Every call is one atomic transition inside one SQLite transaction, with the
keys, fields, replies and error strings of the EchoMQ Valkey wire: an export
of the file replays into Valkey. Every verb of the library's registry is a
typed method (generated from the registry when the package is built):
`db.drain("mail", True)`, `mail.drain(True)`, `db.call("drain", "mail",
True)`.

Time. One unit everywhere: a duration is float seconds or a
`datetime.timedelta`; an instant is a timezone-aware `datetime`; a clock is
a callable returning a `datetime` or float Unix seconds (`time.time`
works). Milliseconds appear nowhere in the Python API; the old forms
(`FakeClock.advance(ms=...)`, `FakeClock(start_ms=...)`, `set(int)`, `at=`
with a number, a clock answering milliseconds, `lease_ms=` keywords) are
refused with a message saying what to write.

Threads. A `Database` belongs to the thread that opened it; using it from
another thread raises `RuntimeError`, except `close()` and `interrupt()`,
which any thread may call (a waiting claim on the owner's thread then
returns None). Open one handle per thread: any number of handles, threads
and processes may share one file. A handle dropped without `close()` is
closed by the garbage collector on whatever thread drops it.

Processes. A handle does not cross `fork()`: in the child every call on an
inherited handle raises `RuntimeError` (open a new one there; it leases a
node id of its own, so the ids it mints never meet the parent's). The
inherited handle is never closed in the child (closing it there could
checkpoint or unlock the parent's file); the parent's stays as it was.
"""
import asyncio as _asyncio
import datetime as _dt
import math as _math
import os as _os
import threading as _threading
import time as _time
import traceback as _traceback
import weakref as _weakref
from typing import (Any, Callable, Dict, Iterator, List, Mapping, Optional,
                    Sequence, Set, Tuple, Type, Union, cast)

from ._native import ffi as _ffi, lib as _lib
from ._verbs import REGISTRY as _REGISTRY, DatabaseVerbs, QueueVerbs

__all__ = [
    "open", "Database", "Queue", "Job", "Lane", "Stream", "Event", "Events",
    "HistoryEntry",
    "FakeClock", "Task", "EmqError",
    "StaleToken", "WrongKind", "WrongType", "VersionFence", "InvalidQueue",
    "InvalidId", "InvalidArgument", "Busy", "EmqIOError", "DiskFull",
    "OutOfMemory", "NotEmqlite", "SchemaTooNew", "Corrupt", "TooBig",
    "ReadOnly", "CantOpen", "Malformed", "Internal", "EmptyBatch",
    "NotSupported", "Locked", "NotPaused", "ActiveJobs", "NotDead",
    "RateLimited", "Refused", "NonMonotonic", "EngineError", "Verb",
    "verbs", "version", "sqlite_version", "slot", "WIRE", "Duration",
    "Instant", "Bytes", "ClockFn",
    "TargetExists", "RemoteError", "Exhausted",
]

#: A payload, result or field: bytes (str is encoded as UTF-8).
Bytes = Union[bytes, bytearray, memoryview, str]
#: A duration: float seconds or a timedelta.
Duration = Union[float, _dt.timedelta]
#: An instant: a timezone-aware datetime.
Instant = _dt.datetime
#: A clock: returns a datetime or float Unix seconds.
ClockFn = Callable[[], Union[_dt.datetime, float]]

#: The library's version; the binding's version is the same string.
__version__: str = _ffi.string(_lib.emq_version()).decode()
#: The wire identity the library speaks (stored at "{emq}:version").
WIRE = "echomq:4.0.0"


def version() -> str:
    """The C library's version."""
    return __version__


def sqlite_version() -> str:
    """The version of the SQLite linked into the extension."""
    return cast(bytes, _ffi.string(_lib.emq_sqlite_version())).decode()


def slot(key: Bytes) -> int:
    """The Valkey Cluster slot of `key` (bytes or str)."""
    b = _bytes(key, "key")
    return int(_lib.emq_slot(b, len(b)))


# ---------------------------------------------------------------- errors

# The exception classes are generated at build time from the library's one
# table of result codes (EMQ_RESULT_MAP in emqlite.h; emqlite_gen.py): a
# code added there has its class here with no code written by hand.
from ._errors import (  # noqa: E402
    BY_CODE as _ERRORS,
    EmqError,
    StaleToken,
    WrongKind,
    WrongType,
    VersionFence,
    InvalidQueue,
    InvalidId,
    InvalidArgument,
    Busy,
    EmqIOError,
    DiskFull,
    OutOfMemory,
    NotEmqlite,
    SchemaTooNew,
    Corrupt,
    TooBig,
    ReadOnly,
    CantOpen,
    Malformed,
    Internal,
    EmptyBatch,
    NotSupported,
    Locked,
    NotPaused,
    ActiveJobs,
    NotDead,
    RateLimited,
    Refused,
    NonMonotonic,
    EngineError,
    Exhausted,
    RemoteError,
    TargetExists,
)


def _error(code: int, message: str) -> EmqError:
    if not message:
        message = cast(bytes, _ffi.string(_lib.emq_strerror(code))).decode()
    return _ERRORS.get(code, EmqError)(code, message)



# ------------------------------------------------------------- conversions

def _bytes(v: object, what: str = "value") -> bytes:
    """A payload-like argument as bytes (binary-safe: NUL allowed)."""
    if isinstance(v, bytes):
        return v
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, str):
        return v.encode("utf-8")
    raise TypeError("%s: expected bytes or str, not %s" % (
        what, type(v).__name__))


_NAME_ERRORS: Dict[str, Tuple[Type[EmqError], int]] = {}


def _name(v: object, what: str, cls: Type[EmqError] = InvalidArgument
          ) -> bytes:
    """A name or id (queue, job id, group, stream name...) as the bytes of a
    C string: str (or bytes), checked for type and for NUL before it
    reaches C, which would read it only up to the NUL."""
    if isinstance(v, str):
        b = v.encode("utf-8")
    elif isinstance(v, bytes):
        b = v
    else:
        raise TypeError("%s: expected str, not %s (%r)" % (
            what, type(v).__name__, v))
    if b"\x00" in b:
        raise cls(int(_lib.EMQ_EINVAL if cls is InvalidArgument else
                      _lib.EMQ_EQUEUE if cls is InvalidQueue else
                      _lib.EMQ_EID),
                  "%s %r: contains a NUL byte (names and ids are C strings "
                  "without NUL)" % (what, v))
    return b


def _qname(v: object) -> bytes:
    return _name(v, "queue", InvalidQueue)


def _idname(v: object, what: str = "id") -> bytes:
    return _name(v, what, InvalidId)


def _seconds(v: object, what: str) -> float:
    """A duration (float seconds or a timedelta) in seconds."""
    if isinstance(v, _dt.timedelta):
        return v.total_seconds()
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("%s: a duration is float seconds or a timedelta, "
                        "not %s" % (what, type(v).__name__))
    if v != v:
        raise ValueError("%s: NaN is not a duration" % what)
    return float(v)


def _ms(v: object, what: str) -> int:
    """A duration as integer milliseconds (what the C API takes)."""
    s = _seconds(v, what)
    if _math.isinf(s):
        raise ValueError("%s: an infinite duration" % what)
    return int(round(s * 1000))


_OLD_INSTANT = ("%s: an instant is a timezone-aware datetime, not %s; for "
                "Unix seconds s write datetime.fromtimestamp(s, "
                "timezone.utc)")


def _instant_ms(v: object, what: str) -> int:
    """An instant (an aware datetime) as Unix milliseconds."""
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None or v.tzinfo.utcoffset(v) is None:
            raise ValueError("%s: a naive datetime has no time zone; write "
                             "datetime(..., tzinfo=timezone.utc)" % what)
        return int(round(v.timestamp() * 1000))
    raise TypeError(_OLD_INSTANT % (what, type(v).__name__))


def _from_ms(ms: int) -> _dt.datetime:
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc)


#: Unix seconds beyond this (the year 5138) are taken for milliseconds.
_MS_HORIZON = 1e11


def _clock_ms(v: object) -> int:
    """What a clock callable answered, as Unix ms."""
    if isinstance(v, _dt.datetime):
        return _instant_ms(v, "clock()")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("clock() must return a datetime or float Unix "
                        "seconds, not %s" % type(v).__name__)
    if abs(v) >= _MS_HORIZON:
        raise ValueError("clock() returned %r, which reads as milliseconds: "
                         "clocks return float Unix seconds (divide by 1000) "
                         "or a datetime" % (v,))
    return int(round(v * 1000))


def _key(r: Any) -> Union[str, bytes]:
    s: bytes = _ffi.buffer(r.str, r.len)[:] if r.str != _ffi.NULL else b""
    try:
        return s.decode("utf-8")
    except UnicodeDecodeError:
        return s


def _value(r: Any) -> Any:
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

_GATE = {1: "QUEUE", 2: "ID", 3: "GROUP", 4: "BYTES", 5: "INT", 6: "POS",
         7: "NNEG", 8: "BOOL", 9: "WORD", 10: "DID", 11: "NAME"}


class Verb:
    """A row of the library's verb registry: `name` (the wire name), `tier`,
    `kind` ("write", "read", "procedure", "host"), `args` (a list of
    (name, optional, repeated)), `gates` (each argument's gate),
    `summary`."""

    def __init__(self, info: Any) -> None:
        self.name: str = _ffi.string(info.name).decode()
        self.id: int = info.id
        self.tier: int = info.tier
        self.kind: str = {
            _lib.EMQ_VERB_WRITE: "write", _lib.EMQ_VERB_READ: "read",
            _lib.EMQ_VERB_PROC: "procedure",
            _lib.EMQ_VERB_HOST: "host"}.get(info.kind, "?")
        self.args: List[Tuple[str, bool, bool]] = [
            (_ffi.string(info.args[i].name).decode(),
             bool(info.args[i].flags & _lib.EMQ_ARGF_OPT),
             bool(info.args[i].flags & _lib.EMQ_ARGF_REST))
            for i in range(info.nargs)]
        self.gates: List[str] = [_GATE.get(info.args[i].kind, "?")
                                 for i in range(info.nargs)]
        self.summary: str = _ffi.string(info.summary).decode()

    def __repr__(self) -> str:
        return "<Verb %s(%s)>" % (self.name,
                                  ", ".join(a[0] for a in self.args))


def verbs() -> List[Verb]:
    """Every verb of the registry, in registry order."""
    return [Verb(_lib.emq_verb_at(i)) for i in range(_lib.emq_verb_count())]


#: name -> (args specs) from the generated table
_SPECS: Dict[str, Tuple[Tuple[str, str, bool, bool, str], ...]] = {
    r[0]: r[3] for r in _REGISTRY}


def _wire_arg(spec: Tuple[str, str, bool, bool, str], v: Any) -> Optional[
        bytes]:
    """One Python argument as the wire's bytes, by its gate."""
    name, gate, _opt, _rep, words = spec
    if v is None:
        return None
    if name.endswith("_ms"):
        what = name[:-3]
        if name == "run_at_ms":
            return str(_instant_ms(v, what)).encode()
        return str(_ms(v, what)).encode()
    if gate == "QUEUE":
        return _qname(v)
    if gate in ("ID",):
        return _idname(v, name)
    if gate in ("GROUP", "DID", "NAME"):
        return _name(v, name, InvalidId if gate == "GROUP"
                     else InvalidArgument)
    if gate == "BOOL":
        if not isinstance(v, bool):
            raise TypeError("%s: expected bool, not %s" % (
                name, type(v).__name__))
        return b"1" if v else b"0"
    if gate in ("INT", "POS", "NNEG"):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError("%s: expected int, not %s" % (
                name, type(v).__name__))
        return str(v).encode()
    if gate == "WORD":
        b = _name(v, name)
        if b.decode("utf-8", "replace") not in words.split("|"):
            raise InvalidArgument(int(_lib.EMQ_EINVAL), "%s: %r is not one "
                                  "of %s" % (name, v, words))
        return b
    return _bytes(v, name)


def _wire_argv(verb: str, argv: Sequence[Any],
               tail: Optional[Sequence[Any]]) -> List[Optional[bytes]]:
    specs = _SPECS[verb]
    fixed = [s for s in specs if not s[3]]
    rest = [s for s in specs if s[3]]
    out = [_wire_arg(s, v) for s, v in zip(fixed, argv)]
    if rest and tail is not None:
        if isinstance(tail, (str, bytes)):
            raise TypeError("%s: expected a sequence, not %s" % (
                rest[0][0].partition(".")[0], type(tail).__name__))
        for item in tail:
            if len(rest) == 1:
                out.append(_wire_arg(rest[0], item))
                continue
            if not isinstance(item, (tuple, list)) or len(item) != len(rest):
                raise TypeError("%s: each item is a tuple (%s)" % (
                    rest[0][0].partition(".")[0],
                    ", ".join(s[0] for s in rest)))
            out.extend(_wire_arg(s, x) for s, x in zip(rest, item))
    while out and out[-1] is None:
        out.pop()
    return out


# ----------------------------------------------------------------- clocks

_DEFAULT_START = _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc)


class FakeClock:
    """A clock for tests: it starts at `start` (an aware datetime; default
    2026-01-01T00:00:00Z) and moves only when told to."""

    def __init__(self, start: _dt.datetime = _DEFAULT_START,
                 **old: Any) -> None:
        if old:
            raise TypeError("FakeClock(%s=...) is the old form: write "
                            "FakeClock(datetime(2026, 1, 1, tzinfo="
                            "timezone.utc))" % next(iter(old)))
        self._ms = _instant_ms(start, "FakeClock(start)")

    def __call__(self) -> _dt.datetime:
        return _from_ms(self._ms)

    def now(self) -> _dt.datetime:
        """The clock's time."""
        return _from_ms(self._ms)

    def advance(self, delta: Duration = 0.0, **old: Any) -> _dt.datetime:
        """Move forward by `delta` (float seconds or a timedelta); returns
        the new time."""
        if "seconds" in old and len(old) == 1:
            delta = _seconds(old.pop("seconds"), "seconds")
        if old:
            raise TypeError("FakeClock.advance(%s=...) is the old form: "
                            "write advance(seconds) with float seconds or "
                            "advance(timedelta(milliseconds=n))"
                            % next(iter(old)))
        self._ms += _ms(delta, "FakeClock.advance")
        return self.now()

    def set(self, instant: _dt.datetime) -> None:
        """Jump to `instant` (an aware datetime)."""
        self._ms = _instant_ms(instant, "FakeClock.set")


class _ClockBox:
    """What the C clock callback reaches through its context: the clock and
    nothing else (no reference back to the Database)."""

    __slots__ = ("clock", "__weakref__")

    def __init__(self, clock: ClockFn) -> None:
        self.clock = clock


_last_clock_error = _threading.local()


@_ffi.def_extern(onerror=lambda *exc: _clock_failed(exc))  # type: ignore
def _emq_py_clock(ctx: Any) -> int:
    c = _ffi.from_handle(ctx).clock
    if type(c) is FakeClock:
        return c._ms
    return _clock_ms(c())


def _clock_failed(exc: Tuple[Any, BaseException, Any]) -> int:
    # The library then fails the transition before it touches anything.
    _last_clock_error.exc = exc[1]
    return int(_lib.EMQ_CLOCK_FAILED)


def _take_clock_error() -> None:
    exc = getattr(_last_clock_error, "exc", None)
    if exc is not None:
        _last_clock_error.exc = None
        raise exc


# ---------------------------------------------------------------- handles

_SYNC = {"normal": 1, "full": 2}
#: A waiting claim waits in slices this long, so Ctrl-C (which Python
#: handles between C calls) and a closing thread are seen within one.
_WAIT_SLICE = 0.2


class _Handle:
    """The C handle and what must live exactly as long as it: the clock's
    callback context. Holds no reference to its Database, so dropping the
    Database frees it (weakref.finalize -> _release, on whichever thread
    the collector runs)."""

    def __init__(self) -> None:
        self.ptr: Any = None
        self.pid = _os.getpid()
        self.lock = _threading.Lock()
        self.closing = False
        self.box: Optional[_ClockBox] = None
        self.ctx: Any = None
        self.keep: Set[Any] = set()

    def release(self) -> None:
        """Close the C handle (idempotent). In a forked child the inherited
        handle is left alone: closing it there could checkpoint, truncate
        or unlock the file under the parent."""
        ptr, self.ptr = self.ptr, None
        if ptr is not None and self.pid == _os.getpid():
            _lib.emq_close(ptr)


def _release(h: _Handle) -> None:
    with h.lock:
        h.release()


def open(path: "Union[str, _os.PathLike[str]]" = ":memory:", *,
         clock: Optional[ClockFn] = None, sync: str = "normal",
         busy_timeout: Duration = 5.0, node_id: Optional[int] = None,
         readonly: bool = False, exclusive: bool = False,
         max_payload: Optional[int] = None,
         checkpoint_frames: Optional[int] = None,
         inline: bool = False) -> "Database":
    """Open (creating if absent) the emqlite file at `path` (":memory:" for
    a private in-memory database) and pass the version fence. `clock` is a
    callable returning a datetime or Unix seconds (a FakeClock in tests);
    `sync` "normal" or "full"; `busy_timeout` a duration; `inline` makes
    tasks run at once when enqueued (Queue.task). Returns a Database (also
    a context manager)."""
    return Database(path, clock=clock, sync=sync, busy_timeout=busy_timeout,
                    node_id=node_id, readonly=readonly, exclusive=exclusive,
                    max_payload=max_payload,
                    checkpoint_frames=checkpoint_frames, inline=inline)


def _path(path: object) -> bytes:
    if isinstance(path, _os.PathLike):
        path = _os.fspath(path)
    if isinstance(path, bytes):
        path = _os.fsdecode(path)
    if not isinstance(path, str):
        raise TypeError("path: expected str or os.PathLike, not %s (%r)" % (
            type(path).__name__, path))
    if "\x00" in path:
        raise CantOpen(int(_lib.EMQ_ECANTOPEN), "path %r: contains a NUL "
                       "byte" % path)
    return _os.fsencode(path)


class Database(DatabaseVerbs):
    """An open emqlite file. Not thread-safe: one per thread (close() and
    interrupt() excepted). Every registry verb is a method of it, by its
    wire name, the queue first: `db.drain("mail", True)`."""

    def __init__(self, path: "Union[str, _os.PathLike[str]]" = ":memory:",
                 *, clock: Optional[ClockFn] = None, sync: str = "normal",
                 busy_timeout: Duration = 5.0, node_id: Optional[int] = None,
                 readonly: bool = False, exclusive: bool = False,
                 max_payload: Optional[int] = None,
                 checkpoint_frames: Optional[int] = None,
                 inline: bool = False) -> None:
        self._h = h = _Handle()
        self._owner = _threading.get_ident()
        self._borrower: Optional[int] = None
        self.inline = inline
        self._tasks: Dict[str, "Task"] = {}
        cpath = _path(path)
        self.path = _os.fsdecode(cpath)
        o = _ffi.new("emq_options *")
        _lib.emq_options_init_size(o, _ffi.sizeof("emq_options"))
        if sync not in _SYNC:
            raise ValueError("sync must be 'normal' or 'full', not %r"
                             % (sync,))
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
        self._clock = clock
        if clock is not None:
            if not callable(clock):
                raise TypeError("clock must be a callable returning a "
                                "datetime or Unix seconds")
            h.box = _ClockBox(clock)
            h.ctx = _ffi.new_handle(h.box)
            o.clock = _lib._emq_py_clock
            o.clock_ctx = h.ctx
        out = _ffi.new("emq_db **")
        err = _ffi.new("char[]", 512)
        rc = _lib.emq_open_ex(cpath, o, out, err, 512)
        _take_clock_error()
        if rc != 0:
            raise _error(rc, _ffi.string(err).decode("utf-8", "replace"))
        h.ptr = out[0]
        self._finalizer = _weakref.finalize(self, _release, h)

    # -- lifecycle
    def close(self) -> None:
        """Close the handle (idempotent). Any thread may call it: a waiting
        claim in progress returns None first."""
        h = self._h
        if h.ptr is None:
            return
        if h.pid != _os.getpid():
            h.ptr = None        # inherited across fork: never closed here
            return
        h.closing = True
        _lib.emq_claim_wait_interrupt(h.ptr)
        with h.lock:
            h.release()

    def interrupt(self) -> None:
        """Make a waiting claim on this handle (in progress, or the next)
        return promptly. Any thread may call it."""
        h = self._h
        if h.ptr is not None and h.pid == _os.getpid():
            _lib.emq_claim_wait_interrupt(h.ptr)

    @property
    def closed(self) -> bool:
        return self._h.ptr is None

    def __enter__(self) -> "Database":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check(self) -> Any:
        """The C handle, after the checks every call makes."""
        h = self._h
        if h.pid != _os.getpid():
            raise RuntimeError(
                "this emqlite Database was opened in process %d and "
                "inherited across fork() by process %d: a handle does not "
                "cross fork (the child would mint the parent's ids); open "
                "a new one in the child" % (h.pid, _os.getpid()))
        if h.ptr is None:
            raise ValueError("the database %r is closed" % self.path)
        me = _threading.get_ident()
        if me != self._owner and me != self._borrower:
            raise RuntimeError("an emqlite Database belongs to the thread "
                               "that opened it; open one per thread")
        return h.ptr

    def _c(self, fn: Any, *args: Any) -> int:
        """Run the C call fn(handle, *args) under the handle's lock (a
        waiting claim of the async variant holding it is interrupted) and
        turn a failure into its exception."""
        self._check()
        h = self._h
        lk = h.lock
        if not lk.acquire(False):
            _lib.emq_claim_wait_interrupt(h.ptr)
            lk.acquire()
        try:
            if h.ptr is None:
                raise ValueError("the database %r is closed" % self.path)
            rc = int(fn(h.ptr, *args))
        finally:
            lk.release()
        return self._ok(rc)

    def _raise(self, rc: int) -> None:
        _take_clock_error()
        raise _error(rc, _ffi.string(_lib.emq_errmsg(self._h.ptr)).decode(
            "utf-8", "replace"))

    def _ok(self, rc: int) -> int:
        _take_clock_error()
        if rc < 0:
            self._raise(rc)
        return rc

    # -- basics
    @property
    def node_id(self) -> int:
        """The node id (0..1023) this handle mints with."""
        return int(_lib.emq_node_id(self._check()))

    def now(self) -> _dt.datetime:
        """The handle's clock."""
        self._check()
        ms = int(_lib.emq_now(self._h.ptr))
        _take_clock_error()
        return _from_ms(ms)

    def mint(self, namespace: str = "JOB") -> str:
        """A fresh branded id in `namespace`."""
        out = _ffi.new("char[15]")
        self._c(_lib.emq_mint, _name(namespace, "namespace"), out)
        return cast(bytes, _ffi.string(out)).decode()

    def queue(self, name: str) -> "Queue":
        """The queue `name` on this database (no I/O)."""
        return Queue(self, name)

    def checkpoint(self) -> None:
        self._c(_lib.emq_checkpoint)

    # -- the registry
    def call(self, verb: str, *args: Any, **kwargs: Any) -> Any:
        """Run any registered verb by its wire name, with the arguments of
        its typed method (`db.call("drain", "mail", True)` is
        `db.drain("mail", True)`); returns its reply as a Python value
        (int, bytes, None, list, dict, bool); raises EmqError on a failure
        or a wire error."""
        if not isinstance(verb, str) or verb not in _SPECS:
            raise InvalidArgument(int(_lib.EMQ_EINVAL),
                                  "unknown verb %r" % (verb,))
        for k in kwargs:
            if k.endswith("_ms"):
                raise TypeError(
                    "%s(%s=...) is the old form in milliseconds: write %s= "
                    "with float seconds or a timedelta%s" % (
                        verb, k, k[:-3], " (an instant: a datetime)"
                        if k == "run_at_ms" else ""))
        return getattr(DatabaseVerbs, verb)(self, *args, **kwargs)

    def _run_verb(self, name: str, argv: List[Any],
                  tail: Optional[Sequence[Any]]) -> Any:
        return self._call(name, _wire_argv(name, argv, tail))

    def _call(self, verb: str, argv: Sequence[Optional[bytes]]) -> Any:
        n = len(argv)
        cargv = _ffi.new("char *[]", max(n, 1))
        clen = _ffi.new("size_t[]", max(n, 1))
        bufs = []
        for i, a in enumerate(argv):
            if a is None:
                cargv[i] = _ffi.NULL
            else:
                b = _ffi.new("char[]", a)
                bufs.append(b)
                cargv[i] = b
                clen[i] = len(a)
        r = _ffi.new("emq_reply *")
        try:
            self._c(_lib.emq_call, verb.encode(), n, cargv, clen, r)
            return _value(r)
        finally:
            _lib.emq_reply_clear(r)

    # -- reads
    def queues(self) -> List[str]:
        """The queues with keys in the file, in byte order."""
        out = _ffi.new("char ***")
        n = _ffi.new("size_t *")
        self._c(_lib.emq_queues, out, n)
        try:
            return [cast(bytes, _ffi.string(out[0][i])).decode()
                    for i in range(n[0])]
        finally:
            _lib.emq_queues_free(out[0], n[0])

    def stats(self, queue: str) -> Dict[str, int]:
        """The figures of `queue`: pending, active, scheduled, dead,
        completed, failed (ints) and paused (0 or 1)."""
        st = _ffi.new("emq_stats *")
        self._c(_lib.emq_stats_get, _qname(queue), st)
        return {"pending": st.pending, "active": st.active,
                "scheduled": st.scheduled, "dead": st.dead,
                "completed": st.completed, "failed": st.failed,
                "paused": bool(st.paused)}

    def check(self) -> List[Tuple[str, str, str, str]]:
        """Check the file's invariants: a list of (severity, code, key,
        message) findings, severity "violation" or "note" (an empty list for
        a clean file)."""
        found: List[Tuple[str, str, str, str]] = []

        @_ffi.callback("void(void *, const emq_finding *)")  # type: ignore
        def cb(ctx: Any, f: Any) -> None:
            found.append(("violation" if f.severity == 1 else "note",
                          _ffi.string(f.code).decode(),
                          _ffi.string(f.key).decode("utf-8", "replace"),
                          _ffi.string(f.message).decode("utf-8", "replace")))

        nv = _ffi.new("size_t *")
        try:
            self._c(_lib.emq_check, cb, _ffi.NULL, nv)
        except Corrupt:
            pass
        return found

    # -- moving data
    def export(self, queues: Optional[Sequence[str]] = None,
               by_slot: bool = False) -> bytes:
        """The file's keyspace as a RESP command stream (bytes) that
        `redis-cli --pipe` replays into Valkey."""
        chunks: List[bytes] = []

        @_ffi.callback("int(void *, const void *, size_t)")  # type: ignore
        def sink(ctx: Any, data: Any, n: int) -> int:
            chunks.append(_ffi.buffer(data, n)[:])
            return 0

        o = _ffi.new("emq_export_options *")
        _lib.emq_export_options_init_size(
            o, _ffi.sizeof("emq_export_options"))
        keep = []
        if queues:
            arr = _ffi.new("char *[]", len(queues))
            for i, q in enumerate(queues):
                b = _ffi.new("char[]", _qname(q))
                keep.append(b)
                arr[i] = b
            o.queues = arr
            o.n_queues = len(queues)
        o.by_slot = 1 if by_slot else 0
        s = _ffi.new("emq_transfer_summary *")
        self._c(_lib.emq_export, o, sink, _ffi.NULL, s)
        return b"".join(chunks)

    def import_(self, data: Bytes) -> Dict[str, int]:
        """Apply an export (a RESP command stream ending with its end record:
        a cut export is refused) in one transaction; returns a dict of keys,
        commands, bytes, digest."""
        b = _bytes(data, "data")
        s = _ffi.new("emq_transfer_summary *")
        self._c(_lib.emq_import, b, len(b), s)
        return {"keys": s.keys, "commands": s.commands, "bytes": s.bytes,
                "digest": s.digest}

    def digest(self) -> int:
        """The logical digest of the file's keyspace (an int)."""
        s = _ffi.new("emq_transfer_summary *")
        self._c(_lib.emq_digest, _ffi.NULL, s)
        return int(s.digest)

    # -- job history (doc/HISTORY.md)
    def history(self, id: str, queue: Optional[str] = None
                ) -> List["HistoryEntry"]:
        """What happened to job `id` (of `queue`, or of any queue), oldest
        first: a list of HistoryEntry (empty when nothing was recorded)."""
        out: List[HistoryEntry] = []

        @_ffi.callback("int(void *, const emq_history_entry *)")  # type: ignore
        def cb(ctx: Any, e: Any) -> int:
            out.append(HistoryEntry._of(e))
            return 0

        self._c(_lib.emq_job_history,
                _qname(queue) if queue is not None else _ffi.NULL,
                _idname(id), cb, _ffi.NULL)
        return out

    _LEVELS = {"off": 0, "on": 1, "failures": 2}

    @property
    def history_level(self) -> str:
        """What the job history records for this file: "on" (every
        transition, the default), "failures" (retries, deaths, lost leases,
        removals and requeues; dead jobs kept, completed ones not) or
        "off". Setting it stores it in the file."""
        cfg = _ffi.new("emq_history_config *")
        self._c(_lib.emq_history_config_get, cfg)
        return {v: k for k, v in self._LEVELS.items()}.get(cfg.enabled, "on")

    @history_level.setter
    def history_level(self, level: str) -> None:
        if level not in self._LEVELS:
            raise InvalidArgument(int(_lib.EMQ_EINVAL),
                                  "history_level must be 'on', 'failures' "
                                  "or 'off', not %r" % (level,))
        cfg = _ffi.new("emq_history_config *")
        self._c(_lib.emq_history_config_get, cfg)
        cfg.enabled = self._LEVELS[level]
        self._c(_lib.emq_history_config_set, cfg)

    # -- events
    def events(self, queue: Optional[str] = None, *,
               after: Union[int, str] = "now",
               timeout: Optional[Duration] = None) -> "Events":
        """The events of `queue` (None: every queue) as an iterator of
        Event, in commit order, from `after`: "now" (what commits from
        here on), 0 (every retained event) or a cursor saved from
        Events.cursor. Iteration waits for the next event up to `timeout`
        (None: without end; 0: only what is there) and then stops; Ctrl-C
        and close() end a wait. Close it (or use `with`) when done."""
        return Events(self, queue, after, timeout)


# ------------------------------------------------------------------- jobs

class Job:
    """A claimed job: `id`, `attempts` (the fencing token), `payload`
    (bytes), `queue` (None inside a worker, which settles the job itself),
    `group` (the lane's group for a lane job, else None). Settle it with
    complete(), retry(), fail() or extend()."""

    __slots__ = ("queue", "id", "attempts", "payload", "group")

    def __init__(self, queue: Optional["Queue"], id: str, attempts: int,
                 payload: Optional[bytes],
                 group: Optional[str] = None) -> None:
        self.queue = queue
        self.id = id
        self.attempts = attempts
        self.payload = payload
        self.group = group

    @property
    def text(self) -> str:
        """The payload decoded as UTF-8."""
        return (self.payload or b"").decode("utf-8")

    def __repr__(self) -> str:
        return "<Job %s attempts=%d %r>" % (self.id, self.attempts,
                                           (self.payload or b"")[:40])

    def _q(self) -> "Queue":
        if self.queue is None:
            raise RuntimeError("the worker settles this job: return (done) "
                               "or raise (failed) from the handler")
        return self.queue

    def complete(self, result: Optional[Bytes] = None) -> bool:
        """Complete the job (T1.5); True, or False when its row is gone."""
        return self._q().complete(self.id, self.attempts, result)

    def retry(self, delay: Duration = 1.0, max_attempts: int = 3,
              error: Bytes = b"") -> str:
        """Fail this attempt (T1.6): "scheduled" or "dead"."""
        return self._q().retry(self.id, self.attempts, delay=delay,
                               max_attempts=max_attempts, error=error)

    def fail(self, error: Bytes = b"") -> str:
        """Fail this attempt under the queue's retry policy (its backoff and
        attempts cap; without one, 3 attempts 1 s apart): "scheduled" or
        "dead"."""
        return self._q().fail(self.id, self.attempts, error)

    def extend(self, lease: Duration) -> bool:
        """Extend the lease to now + `lease` (T1.11); False when gone."""
        return self._q().extend(self.id, self.attempts, lease)


def _job_from(queue: Optional["Queue"], job: Any,
              group: Optional[str] = None) -> Job:
    payload = (_ffi.buffer(job.payload, job.payload_len)[:]
               if job.payload != _ffi.NULL else None)
    return Job(queue, _ffi.string(job.id).decode(), int(job.attempts),
               payload, group)


def _wait_budget(wait: Optional[Duration]) -> Optional[float]:
    """A wait= argument as seconds (inf: no limit; None: no wait)."""
    if wait is None:
        return None
    s = _seconds(wait, "wait")
    if s < 0:
        raise ValueError("wait: a duration >= 0 (math.inf waits without "
                         "end), not %r" % (wait,))
    return s


# ------------------------------------------------------------------ queues

class Queue(QueueVerbs):
    """A queue of a Database. Every registry verb whose first argument is
    the queue is also a typed method: `q.drain(True)`, `q.counts()`."""

    def __init__(self, db: Database, name: str) -> None:
        self.db = db
        self._q = _qname(name)
        self.name = name

    def __repr__(self) -> str:
        return "<Queue %s>" % self.name

    def _bound_queue(self) -> str:
        return self.name

    def _run_verb(self, name: str, argv: List[Any],
                  tail: Optional[Sequence[Any]]) -> Any:
        return self.db._run_verb(name, argv, tail)

    # -- admissions
    def enqueue(self, payload: Bytes, id: Optional[str] = None,
                at: Optional[_dt.datetime] = None,
                delay: Optional[Duration] = None) -> Optional[str]:
        """Admit a job (T1.1; T1.3 with `at` (a datetime) or `delay`).
        Returns its id, or None when a row with that id already exists (a
        duplicate: nothing changed)."""
        db = self.db
        p = _bytes(payload, "payload")
        if at is not None and delay is not None:
            raise ValueError("give at or delay, not both")
        if id is None:
            id = db.mint("JOB")
        bid = _idname(id)
        if at is not None:
            rc = db._c(_lib.emq_enqueue_at, self._q, bid, p, len(p),
                       _instant_ms(at, "at"))
        elif delay is not None:
            rc = db._c(_lib.emq_enqueue_in, self._q, bid, p, len(p),
                       _ms(delay, "delay"))
        else:
            rc = db._c(_lib.emq_enqueue, self._q, bid, p, len(p))
        return None if rc == _lib.EMQ_DUPLICATE else bid.decode()

    def enqueue_many(self, payloads: Sequence[Union[Bytes, Tuple[str, Bytes]]]
                     ) -> List[Union[str, None, EmqError]]:
        """Enqueue (payload) or (id, payload) items in one transaction; a
        list of verdicts: the id, or None for a duplicate. A WrongKind item
        raises nothing: its verdict is the WrongKind exception."""
        db = self.db
        items: List[Tuple[bytes, bytes]] = []
        for it in payloads:
            if isinstance(it, tuple):
                items.append((_idname(it[0]), _bytes(it[1], "payload")))
            else:
                items.append((_idname(db.mint("JOB")),
                              _bytes(it, "payload")))
        n = len(items)
        arr = _ffi.new("emq_item[]", max(n, 1))
        keep = []
        for i, (iid, p) in enumerate(items):
            ci, cp = _ffi.new("char[]", iid), _ffi.new("char[]", p)
            keep += [ci, cp]
            arr[i].id, arr[i].payload, arr[i].len = ci, cp, len(p)
        v = _ffi.new("int[]", max(n, 1))
        db._c(_lib.emq_enqueue_many, self._q, arr, n, v)
        out: List[Union[str, None, EmqError]] = []
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
    def claim(self, lease: Duration = 30.0, *,
              wait: Optional[Duration] = None) -> Optional[Job]:
        """Claim the oldest pending job with a lease of `lease` (T1.4): a
        Job, or None when nothing is pending or the queue is paused.

        With `wait` (a duration; math.inf: no limit) it is the library's
        waiting claim: lapsed leases and due jobs return to pending, a job
        is claimed from the flat pending set or the fair lanes, and when
        there is none it waits, the GIL released, until a commit on the
        file (any handle, any process) offers one, or `wait` passed (None).
        Ctrl-C (KeyboardInterrupt), Database.interrupt() and close() from
        another thread end the wait within 0.2 s (close: None)."""
        budget = _wait_budget(wait)
        lease_ms = _ms(lease, "lease")
        job = _ffi.new("emq_job *")
        db = self.db
        if budget is None:
            rc = db._c(_lib.emq_claim, self._q, lease_ms, job)
            if rc == _lib.EMQ_EMPTY:
                return None
            try:
                return _job_from(self, job)
            finally:
                _lib.emq_job_clear(job)
        return self._claim_wait(lease_ms, budget, job, None)

    def _claim_wait(self, lease_ms: int, budget: float, job: Any,
                    cancelled: Optional[_threading.Event]) -> Optional[Job]:
        db = self.db
        h = db._h
        end = _time.monotonic() + budget
        while True:
            left = end - _time.monotonic()
            slice_ms = int(max(0.0, min(left, _WAIT_SLICE)) * 1000)
            try:
                rc = db._c(_lib.emq_claim_wait, self._q, lease_ms, slice_ms,
                           job)
            except ValueError:
                if h.closing:
                    return None     # closed by another thread meanwhile
                raise
            if rc != _lib.EMQ_EMPTY:
                try:
                    return _job_from(self, job)
                finally:
                    _lib.emq_job_clear(job)
            if h.closing or left <= 0 or (
                    cancelled is not None and cancelled.is_set()):
                return None

    async def claim_async(self, lease: Duration = 30.0, *,
                          wait: Optional[Duration] = None) -> Optional[Job]:
        """claim() for asyncio: the waiting claim runs on a helper thread
        (the GIL released) while the event loop runs on; another call on
        this Database from the loop interrupts it briefly (it resumes), and
        cancelling the awaiting task ends it. A job claimed just as the
        task is cancelled is left to its lease (reap returns it)."""
        budget = _wait_budget(wait)
        lease_ms = _ms(lease, "lease")
        db = self.db
        db._check()
        if budget is None or budget == 0:
            return self.claim(lease, wait=wait)
        cancelled = _threading.Event()
        loop = _asyncio.get_running_loop()

        def run() -> Optional[Job]:
            db._borrower = _threading.get_ident()
            try:
                return self._claim_wait(lease_ms, cast(float, budget),
                                        _ffi.new("emq_job *"), cancelled)
            finally:
                db._borrower = None

        fut = loop.run_in_executor(None, run)
        try:
            return await _asyncio.shield(fut)
        except _asyncio.CancelledError:
            cancelled.set()
            db.interrupt()
            raise

    def complete(self, id: str, token: int,
                 result: Optional[Bytes] = None) -> bool:
        """T1.5: True when completed, False when the row is gone; raises
        StaleToken on a token mismatch."""
        db = self.db
        bid = _idname(id)
        if result is None:
            rc = db._c(_lib.emq_complete, self._q, bid, _int(token, "token"))
        else:
            r = _bytes(result, "result")
            rc = db._c(_lib.emq_complete_result, self._q, bid,
                       _int(token, "token"), r, len(r))
        return bool(rc == _lib.EMQ_OK)

    def retry(self, id: str, token: int, delay: Duration = 1.0,
              max_attempts: int = 3, error: Bytes = b"") -> str:
        """T1.6: "scheduled" (again in `delay`) or "dead" (at the attempts
        cap); raises StaleToken."""
        e = _bytes(error, "error")
        rc = self.db._c(_lib.emq_retry, self._q, _idname(id),
                        _int(token, "token"), _ms(delay, "delay"),
                        _int(max_attempts, "max_attempts"), e, len(e))
        return "dead" if rc == _lib.EMQ_DEAD else "scheduled"

    def fail(self, id: str, token: int, error: Bytes = b"") -> str:
        """T1.6 under the stored retry policy (set_retry_policy; without
        one 3 attempts, 1 s apart): "scheduled" or "dead"."""
        e = _bytes(error, "error")
        rc = self.db._c(_lib.emq_policy_retry, self._q, _idname(id),
                        _int(token, "token"), e, len(e), _ffi.NULL)
        return "dead" if rc == _lib.EMQ_DEAD else "scheduled"

    def set_retry_policy(self, max_attempts: int = 3, *,
                         delay: Duration = 1.0, exponential: bool = False,
                         cap: Optional[Duration] = None, jitter: int = 0,
                         id: Optional[str] = None) -> None:
        """Store the queue's retry policy (or job `id`'s): the attempts cap
        and the backoff — `delay` between attempts, or with `exponential`
        delay * 2^(attempts-1) up to `cap` — wrapped in `jitter` layers of
        jitter. Workers and fail() retry under it."""
        p = _ffi.new("emq_retry_policy *")
        p.max_attempts = _int(max_attempts, "max_attempts")
        if exponential:
            p.backoff.kind = _lib.EMQ_BACKOFF_EXPONENTIAL
            p.backoff.base_ms = _ms(delay, "delay")
            p.backoff.cap_ms = _ms(cap if cap is not None else 3600.0, "cap")
        else:
            p.backoff.kind = _lib.EMQ_BACKOFF_FIXED
            p.backoff.delay_ms = _ms(delay, "delay")
        p.backoff.jitter = _int(jitter, "jitter")
        self.db._c(_lib.emq_policy_set, self._q,
                   _idname(id) if id is not None else _ffi.NULL, p)

    def extend(self, id: str, token: int, lease: Duration) -> bool:
        """T1.11: True, or False when the row is gone; raises StaleToken."""
        return bool(self.db._c(_lib.emq_lock_extend, self._q, _idname(id),
                               _int(token, "token"), _ms(lease, "lease")
                               ) == _lib.EMQ_OK)

    def promote(self, batch: int = 100) -> int:
        """T1.7: move up to `batch` due scheduled jobs to pending; the
        count."""
        return (self.db.promote(self.name, batch))

    def reap(self) -> int:
        """T1.8: return up to 100 lapsed leases to pending; the count."""
        return (self.db.reap(self.name))

    def pause(self) -> None:
        self.db.set_paused(self.name)

    def resume(self) -> None:
        self.db.clear_paused(self.name)

    # -- reads
    def browse(self, n: int = 10) -> List[str]:
        """The newest `n` pending ids, newest first."""
        return [b.decode() for b in self.db.browse(self.name, n)]

    #: The names counts() reports by default (T2.4's set sizes and metric
    #: counters).
    COUNT_NAMES = ("pending", "active", "schedule", "dead", "completed",
                   "failed")

    def counts(self, names: Optional[Sequence[str]] = None
               ) -> Dict[str, int]:
        """T2.4: the set sizes and metric counters named (by default all
        of COUNT_NAMES), as {name: int}."""
        r = self.db.counts(self.name, list(
            self.COUNT_NAMES if names is None else names))
        return {str(k): int(v) for k, v in r.items()}

    def pending_size(self) -> int:
        return (self.db.pending_size(self.name))

    def stats(self) -> Dict[str, int]:
        return self.db.stats(self.name)

    def job(self, id: str) -> Optional[Dict[str, bytes]]:
        """The fields of job `id`'s row (dict of str -> bytes), or None."""
        db = self.db
        f = _ffi.new("emq_field **")
        n = _ffi.new("size_t *")
        rc = db._c(_lib.emq_job_get, self._q, _idname(id), f, n)
        if rc == _lib.EMQ_GONE:
            return None
        try:
            return {_ffi.buffer(f[0][i].name, f[0][i].name_len)[:].decode(
                        "utf-8", "replace"):
                    _ffi.buffer(f[0][i].value, f[0][i].value_len)[:]
                    for i in range(n[0])}
        finally:
            _lib.emq_fields_free(f[0], n[0])

    def job_info(self, id: str) -> Dict[str, Any]:
        """T2.x job_info: the job's state and row, as the registry answers
        it."""
        return (self.db.job_info(self.name, id))

    def lanes(self) -> Dict[str, Any]:
        """The lanes of the queue (the `lanes` read)."""
        r = self.db.lanes(self.name)
        return cast(Dict[str, Any], r) if isinstance(r, dict) else {
            "lanes": r}

    # -- lanes, streams, tasks
    def lane(self, group: str) -> "Lane":
        """Group `group`'s fair lane in this queue."""
        return Lane(self, group)

    def claim_lane(self, lease: Duration = 30.0) -> Optional[Job]:
        """T3.2: rotate the ring once and claim one job of that group's
        lane: a Job (its `group` set), or None."""
        job = _ffi.new("emq_job *")
        group = _ffi.new("char[15]")
        rc = self.db._c(_lib.emq_lane_claim, self._q, _ms(lease, "lease"),
                        job, group)
        if rc == _lib.EMQ_EMPTY:
            return None
        try:
            return _job_from(self, job, _ffi.string(group).decode())
        finally:
            _lib.emq_job_clear(job)

    def stream(self, name: str) -> "Stream":
        """The stream `name` of this queue (emq:{q}:stream:<name>)."""
        return Stream(self, name)

    def task(self, fn: Optional[Callable[[Job], Optional[Bytes]]] = None, *,
             lease: Duration = 30.0, inline: Optional[bool] = None
             ) -> Any:
        """Decorate the function that runs this queue's jobs:

            @mail.task
            def send(job): ...          # return = done, raise = failed
            send.enqueue(b"...")        # the job's id

        In inline mode (open(..., inline=True), or inline=True here) an
        enqueue runs every due job of the queue at once on the handle's
        clock, so tests see the outcome without a worker; retries then run
        when the test advances its FakeClock and calls send.run_due()."""
        def wrap(f: Callable[[Job], Optional[Bytes]]) -> Task:
            t = Task(self, f, lease=lease, inline=inline)
            self.db._tasks[self.name] = t
            return t
        if fn is not None:
            return wrap(fn)
        return wrap

    def run_due(self, fn: Callable[[Job], Optional[Bytes]],
                lease: Duration = 30.0, limit: int = 1000) -> int:
        """Run `fn` over every job of the queue that is due now, on this
        handle and its clock (the inline mode): each returns (complete, its
        return value the result) or raises (retry under the queue's policy,
        the traceback the error). Returns how many ran."""
        lease_ms = _ms(lease, "lease")
        ran = 0
        job = _ffi.new("emq_job *")
        while ran < limit:
            rc = self.db._c(_lib.emq_claim_wait, self._q, lease_ms, 0, job)
            if rc == _lib.EMQ_EMPTY:
                break
            try:
                j = _job_from(self, job)
            finally:
                _lib.emq_job_clear(job)
            ran += 1
            ok, result, error = _run_handler(fn, Job(None, j.id, j.attempts,
                                                     j.payload))
            if ok:
                self.complete(j.id, j.attempts, result)
            else:
                self.fail(j.id, j.attempts, error)
        return ran


def _int(v: object, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("%s: expected int, not %s" % (what,
                                                      type(v).__name__))
    return v


def _run_handler(fn: Callable[[Job], Optional[Bytes]], job: Job
                 ) -> Tuple[bool, Optional[bytes], bytes]:
    """Run a handler: (True, result, b"") when it returned, (False, None,
    the traceback) when it raised."""
    try:
        r = fn(job)
        return True, (None if r is None else _bytes(r, "result")), b""
    except Exception:
        return False, None, _traceback.format_exc().encode(
            "utf-8", "replace")


class Task:
    """A function bound to a queue by Queue.task: call it with a Job, or
    enqueue work for it; `worker()` runs it over the queue."""

    def __init__(self, queue: Queue, fn: Callable[[Job], Optional[Bytes]],
                 *, lease: Duration = 30.0,
                 inline: Optional[bool] = None) -> None:
        self.queue = queue
        self.fn = fn
        self.lease = lease
        self._inline = inline
        self.__name__ = getattr(fn, "__name__", "task")
        self.__doc__ = getattr(fn, "__doc__", None)

    @property
    def inline(self) -> bool:
        return self.queue.db.inline if self._inline is None else self._inline

    def __call__(self, job: Job) -> Optional[Bytes]:
        return self.fn(job)

    def enqueue(self, payload: Bytes, id: Optional[str] = None,
                at: Optional[_dt.datetime] = None,
                delay: Optional[Duration] = None) -> Optional[str]:
        """Queue.enqueue; in inline mode, then run_due()."""
        jid = self.queue.enqueue(payload, id=id, at=at, delay=delay)
        if self.inline:
            self.run_due()
        return jid

    def run_due(self) -> int:
        """Run every job of the queue due now (see Queue.run_due)."""
        return self.queue.run_due(self.fn, self.lease)

    def worker(self, *, threads: int = 1, processes: int = 0,
               **options: Any) -> Any:
        """A Worker running this task over the queue's file."""
        from .worker import Worker
        return Worker(self.queue.db.path, self.queue.name, self.fn,
                      threads=threads, processes=processes,
                      lease=self.lease, **options)


# ------------------------------------------------------------------- lanes

class Lane:
    """Group `group`'s fair lane of a queue (PROTOCOL.md §6.3)."""

    def __init__(self, queue: Queue, group: str) -> None:
        self.queue = queue
        self._g = _name(group, "group", InvalidId)
        self.group = group

    def __repr__(self) -> str:
        return "<Lane %s/%s>" % (self.queue.name, self.group)

    def enqueue(self, payload: Bytes, id: Optional[str] = None
                ) -> Optional[str]:
        """T3.1: admit a job into this lane; its id, or None for a
        duplicate."""
        q = self.queue
        if id is None:
            id = q.db.mint("JOB")
        r = q.db.lane_enqueue(q.name, self.group, id, payload)
        return id if r == 1 else None

    def pause(self) -> None:
        self.queue.db.lane_pause(self.queue.name, self.group)

    def resume(self) -> None:
        self.queue.db.lane_resume(self.queue.name, self.group)

    def set_limit(self, n: int) -> None:
        """T3.8: at most `n` jobs of the group in flight (0: no limit)."""
        self.queue.db.limit(self.queue.name, self.group, n)

    def set_weight(self, w: int) -> None:
        """T3.5: the group's weight for weighted claims."""
        self.queue.db.weight(self.queue.name, self.group, w)

    def depth(self) -> int:
        """T3.12: the jobs waiting in the lane."""
        return (self.queue.db.depth(self.queue.name, self.group))

    def drain(self) -> int:
        """T3.10: delete every job waiting in the lane; the count."""
        return (self.queue.db.lane_drain(self.queue.name,
                                                  self.group))


# ----------------------------------------------------------------- streams

class Stream:
    """A stream of a queue (Tier 5): entries of fields, consumer groups."""

    def __init__(self, queue: Queue, name: str) -> None:
        self.queue = queue
        _name(name, "stream name")
        self.name = name

    def __repr__(self) -> str:
        return "<Stream %s/%s>" % (self.queue.name, self.name)

    def append(self, fields: Mapping[str, Bytes],
               id: Optional[str] = None) -> str:
        """T5.1: append an entry (its fields in order); the verb's reply
        (decoded)."""
        flat: List[Bytes] = []
        for k, v in fields.items():
            flat += [_name(k, "field"), _bytes(v, "value")]
        r = self.queue.db.append(self.queue.name, self.name, id, flat)
        return (r or b"").decode()

    def range(self, start: str = "-", end: str = "+",
              count: Optional[int] = None
              ) -> List[Tuple[str, Dict[str, bytes]]]:
        """The entries from `start` to `end` (ids; "-" and "+" the ends)."""
        r = self.queue.db.stream_range(self.queue.name, self.name, start,
                                       end, count)
        return [_entry(e) for e in r]

    def __len__(self) -> int:
        return (self.queue.db.stream_len(self.queue.name,
                                                  self.name))

    def create_group(self, group: str, start: str = "$",
                     mkstream: bool = True) -> None:
        self.queue.db.group_create(self.queue.name, self.name, group, start,
                                   mkstream)

    def read_group(self, group: str, consumer: str, count: int = 10,
                   id: str = ">") -> List[Tuple[str, Dict[str, bytes]]]:
        """T5.6: entries for `consumer` of `group` (">" new ones)."""
        r = self.queue.db.group_read(self.queue.name, self.name, group,
                                     consumer, id, count)
        out: List[Tuple[str, Dict[str, bytes]]] = []
        for e in r or []:
            if isinstance(e, list) and len(e) == 2 and isinstance(
                    e[1], list) and e[1] and isinstance(e[1][0], list):
                out += [_entry(x) for x in e[1]]    # [[stream, entries]]
            else:
                out.append(_entry(e))
        return out

    def ack(self, group: str, ids: Sequence[str]) -> int:
        return (self.queue.db.ack(self.queue.name, self.name,
                                           group, list(ids)))


def _entry(e: Any) -> Tuple[str, Dict[str, bytes]]:
    eid, fv = e[0], e[1]
    if isinstance(fv, dict):
        return eid.decode(), {str(k): v for k, v in fv.items()}
    return eid.decode(), {fv[i].decode("utf-8", "replace"): fv[i + 1]
                          for i in range(0, len(fv) - 1, 2)}


# ------------------------------------------------------------- job history

class HistoryEntry:
    """One step of a job's history: `seq` (commit order, file-wide), `at`
    (the transition's time), `kind` ("enqueued", "claimed", "retried",
    "dead", ...), `queue`, `job` (the id), and what the kind carries, None
    otherwise: `attempts`, `delay` (seconds), `run_at` (datetime), `error`
    (bytes), `host`, `pid` and `worker` (who claimed, or who failed it)."""

    __slots__ = ("seq", "at", "kind", "queue", "job", "attempts", "delay",
                 "run_at", "error", "host", "pid", "worker")
    seq: int
    at: _dt.datetime
    kind: str
    queue: str
    job: str
    attempts: Optional[int]
    delay: Optional[float]
    run_at: Optional[_dt.datetime]
    error: Optional[bytes]
    host: Optional[str]
    pid: Optional[int]
    worker: Optional[str]

    @classmethod
    def _of(cls, e: Any) -> "HistoryEntry":
        h = cls.__new__(cls)
        h.seq = int(e.seq)
        h.at = _from_ms(int(e.at_ms))
        k = _lib.emq_history_kind_name(e.kind)
        h.kind = _ffi.string(k).decode() if k != _ffi.NULL else str(e.kind)
        h.queue = _ffi.string(e.queue).decode("utf-8", "replace")
        h.job = _ffi.string(e.id).decode()
        h.attempts = int(e.attempts) if e.attempts >= 0 else None
        h.delay = e.delay_ms / 1000.0 if e.delay_ms >= 0 else None
        h.run_at = _from_ms(int(e.run_at_ms)) if e.run_at_ms >= 0 else None
        h.error = (_ffi.buffer(e.error, e.error_len)[:]
                   if e.error != _ffi.NULL else None)
        h.host = (_ffi.string(e.host).decode("utf-8", "replace")
                  if e.host != _ffi.NULL else None)
        h.pid = int(e.pid) if e.pid >= 0 else None
        h.worker = (_ffi.string(e.worker).decode("utf-8", "replace")
                    if e.worker != _ffi.NULL else None)
        return h

    def __repr__(self) -> str:
        return "<HistoryEntry %d %s %s %s>" % (self.seq, self.queue,
                                               self.kind, self.job)


# ------------------------------------------------------------------ events

class Event:
    """One committed event: `seq` (its place in commit order), `at` (the
    transition's time), `queue`, `name` ("completed", "failed",
    "delayed", "progress" or a published name), `job` (the id) and
    `message` (the published bytes, the wire's JSON)."""

    __slots__ = ("seq", "at", "queue", "name", "job", "message")

    def __init__(self, seq: int, at: _dt.datetime, queue: str, name: str,
                 job: str, message: bytes) -> None:
        self.seq, self.at, self.queue = seq, at, queue
        self.name, self.job, self.message = name, job, message

    def data(self) -> Any:
        """The message decoded as JSON."""
        import json
        return json.loads(self.message)

    def __repr__(self) -> str:
        return "<Event %d %s %s %s>" % (self.seq, self.queue, self.name,
                                        self.job)


class _EventBox:
    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: List[Event] = []


def _s(p: Any, n: int) -> str:
    return cast(bytes, _ffi.buffer(p, n)[:]).decode("utf-8", "replace")


@_ffi.def_extern()  # type: ignore
def _emq_py_event(ctx: Any, ev: Any) -> None:
    box = _ffi.from_handle(ctx)
    box.items.append(Event(
        int(ev.seq), _from_ms(int(ev.at_ms)), _s(ev.queue, ev.queue_len),
        _s(ev.name, ev.name_len), _s(ev.job, ev.job_len),
        _ffi.buffer(ev.message, ev.message_len)[:]))


class Events(Iterator[Event]):
    """An iterator over a queue's (or every queue's) events; see
    Database.events."""

    def __init__(self, db: Database, queue: Optional[str],
                 after: Union[int, str], timeout: Optional[Duration]) -> None:
        self.db = db
        self._box = _EventBox()
        self._ctx = _ffi.new_handle(self._box)
        self._timeout = None if timeout is None else _seconds(timeout,
                                                              "timeout")
        if after == "now":
            start = int(_lib.EMQ_SUB_NOW)
        elif isinstance(after, int) and not isinstance(after, bool) \
                and after >= 0:
            start = after
        else:
            raise ValueError("after: \"now\", 0 or a saved cursor (int), "
                             "not %r" % (after,))
        out = _ffi.new("emq_sub **")
        db._c(_lib.emq_subscribe, _qname(queue) if queue is not None
              else _ffi.NULL, start, _lib._emq_py_event, self._ctx, out)
        self._sub: Any = out[0]
        db._h.keep.add(self._ctx)    # the callback's context lives while
        #                              the subscription can deliver

    def __iter__(self) -> "Events":
        return self

    def _sub_call(self, fn: Any, *args: Any) -> int:
        db = self.db
        if self._sub is None:
            raise ValueError("the event subscription is closed")
        return db._c(lambda _p, *a: fn(self._sub, *a), *args)

    def __next__(self) -> Event:
        box = self._box
        if box.items:
            return box.items.pop(0)
        end = None if self._timeout is None else \
            _time.monotonic() + self._timeout
        while True:
            self._sub_call(_lib.emq_sub_poll, 0, _ffi.NULL)
            if box.items:
                return box.items.pop(0)
            left = _WAIT_SLICE if end is None else end - _time.monotonic()
            if left <= 0 or self.db._h.closing:
                raise StopIteration
            self._sub_call(_lib.emq_sub_wait,
                           int(min(left, _WAIT_SLICE) * 1000), _ffi.NULL)
            if box.items:
                return box.items.pop(0)

    @property
    def cursor(self) -> int:
        """The last sequence number looked at (resume with after=it)."""
        return int(_lib.emq_sub_cursor(self._sub))

    @property
    def lost(self) -> int:
        """Events pruned before this subscription read them."""
        return int(_lib.emq_sub_lost(self._sub))

    def close(self) -> None:
        sub, self._sub = self._sub, None
        self.db._h.keep.discard(self._ctx)
        if sub is not None and self.db._h.ptr is not None and \
                self.db._h.pid == _os.getpid():
            _lib.emq_unsubscribe(sub)

    def __enter__(self) -> "Events":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
