"""SHA-256 and SHA-1 without importing `hashlib` on the hook path.

`import hashlib` loads OpenSSL's libcrypto: ~3 ms of a ~60 ms one-file hook run. CPython
builds its own SHA-1 and SHA-2 code into the interpreter (`_sha1`, `_sha256`; `_sha2` from
3.12). That code is ~6x slower than OpenSSL on large inputs and as fast on the few kilobytes
a hook hashes, so an input over BIG bytes, or a process past BUDGET bytes in all (a
whole-tree check reading its caches), goes through hashlib from then on. The digests are
the same either way (tests/test_digest.py); a Python built without the built-in modules
(some FIPS builds) simply uses hashlib.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # `typing` costs a one-file hook ~5 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

BIG = 512 * 1024  # one input past this goes to OpenSSL: its speed pays for loading it
BUDGET = 1024 * 1024  # so does a process that has hashed this much (a whole-tree check)

_UNSET: Any = object()
# The built-in constructors, imported on first use: each is a shared library to load
# (~0.4 ms), and a hook run often needs only one of them.
_sha256: Any = _UNSET
_sha1: Any = _UNSET

_hashlib: Any = None  # hashlib once loaded: from then on it does all the hashing
_hashed = 0  # bytes hashed by the built-in code so far


def _builtin(data: bytes | memoryview) -> bool:
    """Whether the built-in code should hash `data` (counted against BUDGET): not once
    hashlib is loaded, by us or by anyone else."""
    global _hashed
    if _hashlib is not None or "hashlib" in sys.modules:
        return False
    n = len(data)
    if n <= BIG and _hashed + n <= BUDGET:
        _hashed += n
        return True
    return False


def _openssl() -> Any:
    """hashlib, loaded once."""
    global _hashlib
    if _hashlib is None:
        import hashlib

        _hashlib = hashlib
    return _hashlib


def _builtin_sha256() -> Any:
    global _sha256
    if _sha256 is _UNSET:
        try:
            from _sha2 import sha256 as found  # type: ignore[import-not-found]  # 3.12+
        except ImportError:
            try:
                from _sha256 import sha256 as found  # type: ignore[import-not-found,no-redef]
            except ImportError:
                found = None
        _sha256 = found
    return _sha256


def _builtin_sha1() -> Any:
    global _sha1
    if _sha1 is _UNSET:
        try:
            from _sha1 import sha1 as found  # type: ignore[import-not-found]
        except ImportError:
            found = None
        _sha1 = found
    return _sha1


def sha256(data: bytes | memoryview = b"") -> Any:
    """A sha256 hash object over `data`, like hashlib.sha256(data)."""
    if _builtin(data) and (make := _builtin_sha256()) is not None:
        return make(data)
    return _openssl().sha256(data)


def sha1(data: bytes | memoryview = b"") -> Any:
    """A sha1 hash object over `data` (git's object ids), like hashlib.sha1(data)."""
    if _builtin(data) and (make := _builtin_sha1()) is not None:
        return make(data)
    return _openssl().sha1(data, usedforsecurity=False)
