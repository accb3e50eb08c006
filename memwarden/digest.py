"""SHA-256 and SHA-1 without importing `hashlib` on the hook path.

`import hashlib` loads OpenSSL's libcrypto: ~3 ms of a ~60 ms one-file hook run. CPython
builds its own SHA-1 and SHA-2 code into the interpreter (`_sha1`, `_sha256`; `_sha2` from
3.12). That code is ~6x slower than OpenSSL on large inputs and as fast on the few kilobytes
a hook hashes, so inputs over BIG bytes still go through hashlib. The digests are the same
either way (tests/test_digest.py); a Python built without the built-in modules (some FIPS
builds) simply uses hashlib.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs a one-file hook ~5 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

BIG = 512 * 1024  # past this, OpenSSL's speed pays for loading it (~3 ms)

try:
    from _sha2 import sha256 as _sha256  # type: ignore[import-not-found]  # 3.12+
except ImportError:
    try:
        from _sha256 import sha256 as _sha256  # type: ignore[import-not-found,no-redef]
    except ImportError:
        _sha256 = None
try:
    from _sha1 import sha1 as _sha1  # type: ignore[import-not-found]
except ImportError:
    _sha1 = None


def sha256(data: bytes | memoryview = b"") -> Any:
    """A sha256 hash object over `data`, like hashlib.sha256(data)."""
    if _sha256 is not None and len(data) <= BIG:
        return _sha256(data)
    import hashlib

    return hashlib.sha256(data)


def sha1(data: bytes | memoryview = b"") -> Any:
    """A sha1 hash object over `data` (git's object ids), like hashlib.sha1(data)."""
    if _sha1 is not None and len(data) <= BIG:
        return _sha1(data)
    import hashlib

    return hashlib.sha1(data, usedforsecurity=False)
