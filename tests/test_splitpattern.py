"""memwarden/splitpattern.py: tiktoken's split pattern through `re` splits as `regex` does."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.cachedir import read_sealed, write_sealed
from memwarden.tokens import counter as tokens
from memwarden.tokens import splitpattern

ENCODINGS = ("cl100k_base", "o200k_base")
PATTERNS = {name: tokens._spec(name)["pat_str"] for name in ENCODINGS}


@pytest.fixture(scope="module")
def splits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple]:
    root = tmp_path_factory.mktemp("split")
    out = {}
    for name, pattern in PATTERNS.items():
        split = splitpattern.splitter(pattern, root)
        assert split is not None
        out[name] = (regex.compile(pattern).findall, split)
    return out


EDGES = ("aZ'sStTdDmMlLvVrReEkK\u017f\u212a \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680"
         "\u2000\u2028\u2029\u202f\u3000\u200b\u200d\ufe0f09٣¹½ⅫюЮїЇ'ʼ’\u0301éßǅǈ\u02b0中かカ한"
         "!?.,;:-_/\\|()[]{}<>#*`~\"@$%^&+=👍🏽👩‍💻🇺🇦\U0001d400\U00010400\U0001f9d1\U000e0067"
         "\U0010ffff\U00030000\ud800\udfff")


@settings(max_examples=400, deadline=None)
@given(text=st.text(st.characters(codec=None, exclude_categories=()), max_size=80)
       | st.text(st.sampled_from(EDGES), max_size=60))
def test_splits_like_regex(splits: dict[str, tuple], text: str) -> None:
    for name in ENCODINGS:
        by_regex, by_re = splits[name]
        assert by_re(text) == by_regex(text), name


@pytest.mark.parametrize("name", ENCODINGS)
def test_every_code_point_splits_like_regex(splits: dict[str, tuple], name: str) -> None:
    """Each code point between letters, after a space and before a digit, after an
    apostrophe: every class of the pattern meets every character."""
    by_regex, by_re = splits[name]
    every = [chr(i) for i in range(0x110000)]
    for context in ("a{}b", " {}1", "'{}S\n"):
        text = "".join(context.replace("{}", ch) for ch in every)
        assert by_re(text) == by_regex(text), context
        bmp = "".join(context.replace("{}", ch) for ch in every[:0x10000])
        assert by_re(bmp) == by_regex(bmp), context  # the pattern without astral classes


def test_the_translation_is_kept_and_remade_for_another_regex(tmp_path: Path) -> None:
    pattern = PATTERNS["cl100k_base"]
    assert splitpattern.cached(pattern, tmp_path) is None
    full, bmp = splitpattern.build(pattern, tmp_path)
    assert splitpattern.cached(pattern, tmp_path) == (full, bmp)
    assert "\\U" in full and "\\U" not in bmp and "(?i" not in full and "\\p" not in full
    path = Path(splitpattern._path(pattern, tmp_path))
    stored = read_sealed(path, splitpattern.MAGIC)
    origin, size, mtime = stored[1]
    assert origin == regex._regex.__file__ and size == os.stat(origin).st_size
    # Listed from another build of `regex` (its file changed since): not trusted.
    write_sealed(path, splitpattern.MAGIC, (pattern, (origin, size + 1, mtime), full, bmp))
    assert splitpattern.cached(pattern, tmp_path) is None
    assert splitpattern.splitter(pattern, tmp_path) is not None  # and made again
    assert splitpattern.cached(pattern, tmp_path) == (full, bmp)
    path.write_bytes(b"junk")
    assert splitpattern.cached(pattern, tmp_path) is None


@pytest.mark.parametrize("pattern", [r"\p{L}+\w", r"(?P<x>a)", r"[\S]", r"(?i:(?i:a))",
                                     r"\bword", r"a&b"])
def test_unknown_constructs_keep_the_regex_module(tmp_path: Path, pattern: str) -> None:
    with pytest.raises(splitpattern.Unsupported):
        splitpattern.translate(pattern)
    assert splitpattern.splitter(pattern, tmp_path) is None


def test_texts_with_astral_characters_use_the_full_pattern(splits: dict[str, tuple]) -> None:
    by_regex, by_re = splits["cl100k_base"]
    text = "math \U0001d400\U0001d401bc and 𐐀𐐁 words 👩‍💻"
    assert splitpattern._ASTRAL.search(text) and by_re(text) == by_regex(text)
    assert re.compile(splitpattern.translate(PATTERNS["cl100k_base"], bmp=True)).findall(
        text) != by_regex(text)  # the BMP-only pattern alone would split it wrongly
