"""A hook run counts only the parts of its file that the runs before it have not counted
(memwarden.tokens.counter.PartCounts), and maps the BPE table without its crc32 while the file is
the one whose crc32 matched. Both are caches: the counts must stay tiktoken's exactly, and a
damaged, foreign or changed file must be checked, never trusted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.cachedir import read_sealed
from memwarden.tokens import bpe
from memwarden.tokens import counter as tokens
from memwarden.tokens.counter import OFFICIAL_SHA256, PartCounts, get_encoder
from tests.conftest import make_repo

ENC = "cl100k_base"
FACTS = "".join(f"- F{i:03d}: Агент перевіряє факт номер {i} перед запуском; the curator "
                f"rechecks folder index {i * 7}.\n" for i in range(120))


def exact(text: str) -> int:
    return len(get_encoder(ENC).encode_ordinary(text))


@pytest.fixture
def counted(monkeypatch):
    """The texts tokens._count is asked to count (each a part no memo knew)."""
    seen: list[str] = []
    real = tokens._count
    monkeypatch.setattr(tokens, "_count", lambda text, enc: seen.append(text) or real(text, enc))
    return seen


def test_a_second_run_counts_only_the_edited_line(tmp_path, counted):
    first = PartCounts(ENC, tmp_path)
    assert first(FACTS) == exact(FACTS)
    first.save()
    assert (tmp_path / f"parts-{ENC}.marshal").is_file()
    counted.clear()
    edited = FACTS.replace("folder index 70.", "folder index 71, twice.")
    second = PartCounts(ENC, tmp_path)  # a new process
    assert second(edited) == exact(edited)
    assert counted == ["- F010: Агент перевіряє факт номер 10 перед запуском; the curator "
                       "rechecks folder index 71, twice.\n"]


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.sampled_from(["- a fact\n", "  indented\n", "/path\n", "\n", "ё\r\n",
                                       "# Head\n", "x", " ", "'s\n", "123\n"]) | st.text(
                                           max_size=8), max_size=30),
       cut=st.integers(0, 29))
def test_counts_from_the_memo_are_exact(tmp_path_factory, lines, cut):
    folder = tmp_path_factory.mktemp("parts")
    text = "".join(lines)
    before = "".join(lines[:cut] + lines[cut + 1:])
    memo = PartCounts(ENC, folder)
    assert memo(before) == exact(before)
    memo.save()
    assert PartCounts(ENC, folder)(text) == exact(text)


def _stored(tmp_path) -> PartCounts:
    memo = PartCounts(ENC, tmp_path)
    memo(FACTS)
    memo.save()
    return memo


def test_a_damaged_memo_is_not_trusted(tmp_path, counted):
    memo = _stored(tmp_path)
    assert memo.path is not None
    data = bytearray(Path(memo.path).read_bytes())
    i = data.index("перевіряє".encode())  # a part's text: a lie about what was counted
    data[i:i + 2] = "ї".encode()
    Path(memo.path).write_bytes(bytes(data))
    counted.clear()
    assert PartCounts(ENC, tmp_path)(FACTS) == exact(FACTS)
    assert len(counted) == 120  # every part counted again


def test_a_memo_of_another_version_or_encoding_is_ignored(tmp_path, counted, monkeypatch):
    _stored(tmp_path)
    counted.clear()
    monkeypatch.setattr("memwarden.__version__", "0.0.0-other")
    assert PartCounts(ENC, tmp_path)(FACTS) == exact(FACTS)
    assert len(counted) == 120
    other = tmp_path / "other"
    other.mkdir()
    (tmp_path / f"parts-{ENC}.marshal").rename(other / "parts-o200k_base.marshal")
    counted.clear()
    o200k = PartCounts("o200k_base", other)
    assert o200k(FACTS) == len(get_encoder("o200k_base").encode_ordinary(FACTS))
    assert len(counted) == 120


def test_the_memo_stays_small(tmp_path, monkeypatch):
    monkeypatch.setattr(tokens, "PARTS_MAX_CHARS", 2000)
    old = PartCounts(ENC, tmp_path)
    old(FACTS)
    old.save()
    new = PartCounts(ENC, tmp_path)
    new("- a new fact\n")
    new.save()
    assert new.path is not None
    kept = read_sealed(new.path, tokens.PARTS_MAGIC)[1]
    assert "- a new fact\n" in kept  # this run's parts first
    assert 2000 <= sum(map(len, kept)) < 2000 + 200
    unchanged = os.stat(new.path).st_mtime_ns
    again = PartCounts(ENC, tmp_path)
    again("- a new fact\n")
    again.save()  # nothing new: nothing written
    assert os.stat(new.path).st_mtime_ns == unchanged


def test_a_hook_check_keeps_part_counts_and_no_cache_keeps_none(tmp_path, mw, counted):
    root = make_repo(tmp_path, {"memory/a/facts.md": FACTS})
    path = root / "memory/a/facts.md"
    code, _, _ = mw(root, "check", "memory/a/facts.md")
    assert code in (0, 1)
    assert (root / ".git/memwarden" / f"parts-{ENC}.marshal").is_file()
    path.write_text(FACTS + "- F999: a new fact.\n", encoding="utf-8")
    counted.clear()
    code, out, _ = mw(root, "check", "--format", "json", "memory/a/facts.md")
    assert counted == ["- F999: a new fact.\n"]
    other = make_repo(tmp_path / "b", {"memory/a/facts.md": FACTS})
    mw(other, "check", "--no-cache", "memory/a/facts.md")
    assert not (other / ".git/memwarden").exists()


# ---- the BPE table's crc32 is checked only when the file is not the one checked before


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMWARDEN_CACHE_DIR", str(tmp_path / "cache"))
    for name, value in (("_encoders", {}), ("_pure", {}), ("_verified", set()),
                        ("_memo_read", {}), ("_MEMO", {}), ("_pure_chars", 0)):
        monkeypatch.setattr(tokens, name, value)
    return tmp_path


def _new_process(monkeypatch):
    for name, value in (("_pure", {}), ("_verified", set()), ("_memo_read", {}),
                        ("_MEMO", {})):
        monkeypatch.setattr(tokens, name, value)


@pytest.fixture
def checks(monkeypatch):
    """`check` of every table parse: whether its crc32 was verified."""
    seen: list[bool] = []
    real = bpe.RankTable.parse.__func__  # type: ignore[attr-defined]

    def parse(cls, data, check=True):
        seen.append(check)
        return real(cls, data, check)

    monkeypatch.setattr(bpe.RankTable, "parse", classmethod(parse))
    return seen


def test_an_unchanged_table_is_not_checked_again(fresh, monkeypatch, checks):
    tokens.count_text("writes the table", ENC)
    _new_process(monkeypatch)
    tokens.count_text("reads it, checks it, records it", ENC)
    _new_process(monkeypatch)
    tokens.count_text("reads it unchecked", ENC)
    assert checks == [True, True, False]  # written (and parsed back), read, read again


def test_a_table_damaged_in_place_is_checked_and_rebuilt(fresh, monkeypatch, checks):
    text = "Агент перевіряє факти; the curator rechecks the folder index."
    tokens.count_text("writes the table", ENC)
    _new_process(monkeypatch)
    tokens.count_text("reads it, checks it, records it", ENC)
    path = Path(bpe.table_path(fresh / "cache", OFFICIAL_SHA256[ENC]))
    st_before = path.stat()
    data = bytearray(path.read_bytes())
    data[-5000:] = bytes(5000)  # same size; the write changes ctime whatever mtime says
    with open(path, "r+b") as fh:  # in place: same inode
        fh.write(bytes(data))
    os.utime(path, ns=(st_before.st_atime_ns, st_before.st_mtime_ns))
    _new_process(monkeypatch)
    checks.clear()
    assert tokens.count_text(text, ENC) == exact(text)
    assert checks[0] is True  # not trusted: its identity changed
    assert bpe.read_table(path) is not None  # rebuilt from the verified ranks


# ---- a hook's cache writes come after its answer (memwarden/cli_check.py write_later)


def _wait_for(path, seconds=10.0):
    import time

    end = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < end:
        time.sleep(0.01)
    return path.exists()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="writes are made in place without fork")
def test_cache_writes_are_made_after_returning(tmp_path, monkeypatch):
    import time

    from memwarden.cli.check import write_later

    monkeypatch.delenv("MEMWARDEN_WRITE_CACHES", raising=False)
    marker = tmp_path / "written"

    def slow() -> None:
        time.sleep(0.5)
        marker.write_text(str(os.getpid()))

    start = time.monotonic()
    write_later([slow])
    assert time.monotonic() - start < 0.4 and not marker.exists()
    assert _wait_for(marker)
    assert marker.read_text() != str(os.getpid())  # by another process


def test_cache_writes_now_when_asked(tmp_path, monkeypatch):
    from memwarden.cli.check import write_later

    monkeypatch.setenv("MEMWARDEN_WRITE_CACHES", "now")
    marker = tmp_path / "written"
    write_later([lambda: marker.write_text(str(os.getpid()))])
    assert marker.read_text() == str(os.getpid())


def test_the_console_script_answers_then_writes_its_caches(tmp_path):
    import subprocess
    import sys

    root = make_repo(tmp_path, {"memory/a/facts.md": FACTS})
    proc = subprocess.run([sys.executable, "-m", "memwarden", "check", "memory/a/facts.md"],
                          cwd=root, capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1) and "memwarden: 1 file(s) checked" in proc.stdout
    assert proc.stderr == ""
    cache = root / ".git" / "memwarden"
    assert _wait_for(cache / f"parts-{ENC}.marshal")
    assert _wait_for(cache / "tree.marshal")


# ---- the seal of cache files (memwarden/cachedir.py)


def test_sealed_files_read_back_and_torn_ones_do_not(tmp_path):
    from memwarden.cachedir import write_sealed

    path = tmp_path / "x.marshal"
    assert write_sealed(path, b"MWTEST\x01\x00", {"a": [1, 2]})
    assert read_sealed(path, b"MWTEST\x01\x00") == {"a": [1, 2]}
    assert read_sealed(path, b"MWTEST\x02\x00") is None  # another format
    data = path.read_bytes()
    for broken in (data[:-1], data[:12] + bytes([data[12] ^ 1]) + data[13:]):
        path.write_bytes(broken)
        assert read_sealed(path, b"MWTEST\x01\x00") is None


def test_files_sealed_with_a_sha256_by_earlier_builds_are_read(tmp_path):
    import hashlib
    import marshal

    payload = marshal.dumps({"a": 1})
    path = tmp_path / "old.marshal"
    path.write_bytes(b"MWTEST\x01\x00" + hashlib.sha256(payload).digest() + payload)
    assert read_sealed(path, b"MWTEST\x01\x00") == {"a": 1}
    path.write_bytes(b"MWTEST\x01\x00" + hashlib.sha256(payload).digest() + payload[:-1])
    assert read_sealed(path, b"MWTEST\x01\x00") is None
