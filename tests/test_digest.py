"""memwarden.digest gives hashlib's digests without loading OpenSSL for small inputs."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from memwarden import digest


@given(st.binary(max_size=4096))
def test_small_inputs_hash_as_hashlib(data):
    assert digest.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert digest.sha1(data).hexdigest() == hashlib.sha1(data).hexdigest()
    assert digest.sha256(memoryview(data)).digest() == hashlib.sha256(data).digest()


def test_large_inputs_hash_as_hashlib():
    data = bytes(range(256)) * (digest.BIG // 256 + 7)
    assert len(data) > digest.BIG
    assert digest.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert digest.sha1(data).hexdigest() == hashlib.sha1(data).hexdigest()
    hobj = digest.sha256(b"a")
    hobj.update(b"b")
    assert hobj.hexdigest() == hashlib.sha256(b"ab").hexdigest()


def test_small_inputs_do_not_import_hashlib():
    code = ("import sys; had = 'hashlib' in sys.modules; from memwarden import digest; "
            "digest.sha256(b'x' * 1000).hexdigest(); digest.sha1(b'y').hexdigest(); "
            "print(had or 'hashlib' not in sys.modules)")  # site may load it: not ours
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "True"


def test_a_process_past_the_budget_goes_to_hashlib():
    code = ("import sys; had = 'hashlib' in sys.modules; from memwarden import digest; "
            "chunk = b'z' * (digest.BIG // 2); "
            "[digest.sha256(chunk).digest() for _ in range(digest.BUDGET // len(chunk))]; "
            "a = had or digest._hashlib is None; digest.sha256(chunk).digest(); "
            "print(a, digest._hashlib is sys.modules.get('hashlib') is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "True True"
