"""PartCounter's premise: a newline followed by a character that is neither whitespace nor
"/" always ends a piece of tiktoken's pre-split, so the sum of the parts' token counts is
the whole text's count, for cl100k_base and o200k_base (hypothesis over hostile text, the
example memory and the lines eviction actually re-counts). Also shown: the boundary the
splitter skips ("/" after a newline) really is one in o200k_base, so it is needed."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.apply.evict import PartCounter
from memwarden.tokens.counter import PART as _PART
from memwarden.tokens.counter import count_edited, get_encoder

ENCODINGS = ["cl100k_base", "o200k_base"]
TRICKY = st.sampled_from(["\n", "\r\n", "\r", " ", "  ", "\t", "/", "//", "- ", "'s", "'ll",
                          "123", "4567", "é", "ё", "Привіт", "日本", "👩‍👩‍👧", "\u200b",
                          "\u00a0", "\u2028", "\x1c", ".", "...", "#", "*", "`", "ABC",
                          "abc", "\n\n", " \n", "\n ", "x/\n", "\n/"])
TEXTS = st.lists(TRICKY | st.text(max_size=6), max_size=40).map("".join)


def whole(text: str, enc: str) -> int:
    return len(get_encoder(enc).encode_ordinary(text))


@pytest.mark.parametrize("enc", ENCODINGS)
@settings(max_examples=400, deadline=None)
@given(text=TEXTS)
def test_parts_sum_to_the_whole(enc, text):
    assert sum(whole(p, enc) for p in _PART.split(text)) == whole(text, enc)
    assert PartCounter(enc)(text) == whole(text, enc)


@pytest.mark.parametrize("enc", ENCODINGS)
def test_example_memory_files(enc):
    root = Path(__file__).resolve().parent.parent / "memwarden" / "example"
    files = [p for p in root.rglob("*.md")]
    assert files
    count = PartCounter(enc)
    for p in files:
        text = p.read_text(encoding="utf-8")
        assert count(text) == whole(text, enc), p
        lines = text.splitlines(keepends=True)
        for k in range(0, len(lines), 3):  # texts with some lines removed, as eviction does
            cut = "".join(lines[:k] + lines[k + 2:])
            assert count(cut) == whole(cut, enc), (p, k)


def test_slash_after_a_newline_is_not_a_boundary_in_o200k():
    text = "a;\n//"  # o200k pieces: "a", ";\n//" (2 tokens); split at the newline: 3
    parts = text.split("\n", 1)
    assert sum(whole(p, "o200k_base") for p in (parts[0] + "\n", parts[1])) != \
        whole(text, "o200k_base")
    assert _PART.split(text) == [text]


@pytest.mark.parametrize("enc", ENCODINGS)
@settings(max_examples=300, deadline=None)
@given(head=TEXTS, old=TEXTS, new=TEXTS, tail=TEXTS)
def test_count_edited_equals_a_full_count(enc, head, old, new, tail):
    known, text = head + old + tail, head + new + tail
    assert count_edited(text, known, whole(known, enc), enc) == whole(text, enc)


def test_count_edited_counts_only_the_changed_parts(monkeypatch):
    known = "".join(f"- fact {i}: something worth keeping\n" for i in range(400))
    text = known.replace("- fact 200: something", "- fact 200: anything")
    n = whole(known, "cl100k_base")
    import memwarden.tokens.counter as tokens

    seen: list[str] = []
    real = tokens.count_text
    monkeypatch.setattr(tokens, "count_text", lambda t, e: seen.append(t) or real(t, e))
    assert count_edited(text, known, n, "cl100k_base") == whole(text, "cl100k_base")
    assert seen and max(len(t) for t in seen) < 100  # a spy: the counts stay real
