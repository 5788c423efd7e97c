"""The exception classes are the library's result table (EMQ_RESULT_MAP):
every failure code the compiled library lists has its class, named as the
table names it, raised for that code; no class is left over."""
from typing import Any, Iterator

import emqlite
from emqlite import _errors
from emqlite._native import ffi, lib


def table_rows() -> Iterator[Any]:
    i = 0
    while True:
        r = lib.emq_result_at(i)
        if r == ffi.NULL:
            return
        yield r
        i += 1


def test_every_failure_code_of_the_table_has_its_exception() -> None:
    seen = set()
    for r in table_rows():
        if r.code >= 0:
            continue
        name = ffi.string(r.exception).decode()
        assert name, ffi.string(r.name)
        cls = getattr(emqlite, name)
        assert issubclass(cls, emqlite.EmqError)
        assert _errors.BY_CODE[r.code] is cls
        assert cls.code_name == ffi.string(r.name).decode()
        kind = ffi.string(r.kind).decode()
        base = {"value": ValueError, "os": OSError,
                "memory": MemoryError}.get(kind)
        if base is not None:
            assert issubclass(cls, base), (name, kind)
        seen.add(r.code)
    assert seen == set(_errors.BY_CODE)
    assert len(seen) >= 32
