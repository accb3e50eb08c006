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
from memwarden.tokens import counter as tokens
from memwarden.tokens.counter import PartCounts, get_encoder
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
    monkeypatch.setattr("memwarden.version.__version__", "0.0.0-other")
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
    kept = read_sealed(new.path, new._tag())
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


def test_the_console_script_writes_its_caches_before_it_exits(tmp_path):
    import subprocess
    import sys

    root = make_repo(tmp_path, {"memory/a/facts.md": FACTS})
    proc = subprocess.run([sys.executable, "-m", "memwarden", "check", "memory/a/facts.md"],
                          cwd=root, capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1) and "memwarden: 1 file(s) checked" in proc.stdout
    assert proc.stderr == ""
    cache = root / ".git" / "memwarden"
    assert (cache / f"parts-{ENC}.marshal").is_file()
    assert (cache / "tree.marshal").is_file()


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


def test_per_user_cache_families_keep_their_newest_files(tmp_path):
    from memwarden.cachedir import write_sealed

    for i in range(7):
        path = tmp_path / f"fam-{i}.marshal"
        assert write_sealed(path, "t", i, keep=3)
        os.utime(path, ns=(i * 10**9, i * 10**9))  # distinct ages whatever the clock gives
    (tmp_path / "other-1.marshal").write_bytes(b"x")
    write_sealed(tmp_path / "fam-7.marshal", "t", 7, keep=3)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["fam-5.marshal", "fam-6.marshal", "fam-7.marshal", "other-1.marshal"]
