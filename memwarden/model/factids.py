"""Short fact ids: one common word per fact, so a read can list every fact's id cheaply.

A fact's id (entries.Fact.id) is 10 hex digits, about 7 tokens in a JSON list; a read near
the Layer 1 limits would spend ~7% of its budget naming facts. Its short id is one word of
factwords.WORDS, picked by the full id, one token after a space in cl100k_base and
o200k_base. Within one list two facts may share a word; those facts are listed by their
full ids instead, so every id in a list names exactly one fact there. `Facts-Used` accepts
both forms: `resolve` maps what a trailer cites to the full ids of the facts it names.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from memwarden.model.factwords import WORDS

_FULL_RE = re.compile(r"[0-9a-f]{10}")


def word_of(fact_id: str) -> str:
    """The short id (a word) of a full fact id; "" for text that is not a fact id."""
    if not _FULL_RE.fullmatch(fact_id):
        return ""
    return WORDS[int(fact_id, 16) % len(WORDS)]


def short_ids(ids: Sequence[str]) -> list[str]:
    """Each id's word, or the id itself where another id of the list has the same word."""
    words = [word_of(i) for i in ids]
    seen = Counter(words)
    return [w if w and seen[w] == 1 else i for i, w in zip(ids, words, strict=True)]


def names(ids: Iterable[str]) -> dict[str, set[str]]:
    """Every name a fact can be cited by (its full id, its word) -> the ids it names; build
    once, look up per citation (a history walk meets thousands of trailers)."""
    out: dict[str, set[str]] = {}
    for i in ids:
        out.setdefault(i, set()).add(i)
        w = word_of(i)
        if w:
            out.setdefault(w, set()).add(i)
    return out


def resolve(cited: Iterable[str], ids: Iterable[str] | dict[str, set[str]]) -> set[str]:
    """The ids among `ids` (or a `names` map) that the cited ids (full ids or words) name.
    A word names every fact with that word: a citation is never lost, at worst one more
    fact counts as used."""
    table = ids if isinstance(ids, dict) else names(ids)
    return {i for c in cited for i in table.get(c.strip(), ())}


def split_cited(value: str) -> list[str]:
    """The ids a `Facts-Used` trailer value lists (comma or space separated)."""
    return [x for x in re.split(r"[,\s]+", value) if x]
