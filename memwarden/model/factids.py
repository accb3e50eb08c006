"""Short fact ids: one common word per fact, so a read can list every fact's id cheaply.

A fact's id (entries.Fact.id) is 10 hex digits, about 7 tokens in a JSON list; a read near
the Layer 1 limits would spend ~7% of its budget naming facts. Its short id is one word of
WORDS (factwords.txt), picked by the full id, one token after a space in cl100k_base and
o200k_base. Within one list two facts may share a word; those facts are listed by their
full ids instead, so every id in a list names exactly one fact there. `Facts-Used` accepts
both forms: `resolve` maps what a trailer cites to the full ids of the facts it names.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from importlib import resources

from memwarden.model.errors import MemwardenError

# The words are those of the EFF large wordlist for random passphrases (Electronic Frontier
# Foundation, 2016, CC BY 3.0 US, https://www.eff.org/dice) that are one token after a space
# in both cl100k_base and o200k_base, less a few that read as instructions to a model. Never
# edit, reorder or extend factwords.txt: every short id ever cited in a trailer depends on it.
WORDS_SHA256 = "c7150e1e2440c7ad8b14692b7de78b9fd2c0af66eafea1aa0200b24f61c4bb93"


def _load_words() -> tuple[str, ...]:
    words = tuple(resources.files("memwarden.model").joinpath("factwords.txt")
                  .read_text("utf-8").split())
    if hashlib.sha256(" ".join(words).encode()).hexdigest() != WORDS_SHA256:
        raise MemwardenError("memwarden/model/factwords.txt is not the shipped word list "
                             "(sha256 mismatch): reinstall memwarden")
    return words


WORDS = _load_words()

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
