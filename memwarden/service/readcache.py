"""Finished read-memory responses that outlive the commit they were made for.

A read of `memory/<agent>/` at commit C depends on C only through the agent's folder, the
memwarden.toml of C (its encoding), C's id and C's date (and, for deep reads, C's day,
which picks the timeline files). Landing another agent's proposal makes a new commit of
main but leaves this agent's folder alone, so the response for the new commit is the old
one with two fields changed: `commit` and `meta.commitDate`, and `tokenCount` recounted.

Why the recount needs no tokenizer run over the response: tiktoken (cl100k_base and
o200k_base alike) first cuts text into pieces with a regular expression and encodes each
piece alone. In the serialization the commit id sits between `"commit":"` and `","mode"`
and the date between `"commitDate":"` and `",`. The pieces are found left to right; the
one holding the quote before the value is a run of punctuation (`":"`), which cannot take
a letter or digit, and every piece starting inside the value (a run of letters or of at
most three digits) cannot take the closing quote. So the values are cut off from their
neighbours whatever their characters, and the response's count is the count of the rest
plus the counts of the commit id and of the date, each encoded alone. tokenCount itself is
solved as budget.finish_count solves it. tests/test_service_readcache.py checks this
against a full count for many commit ids and dates in both encodings.

Only a response that kept everything (nothing truncated or dropped for the budget) is
reused, and only while its recount still fits the budget: then `read_memory` at the new
commit takes exactly the same path (the whole document fits, so nothing is cut) and the
patched text is byte for byte what it returns.
"""

from __future__ import annotations

from typing import Any, NamedTuple

_COMMIT = '"commit":"'
_TOKENS = '"tokenCount":'
_DATE = '"commitDate":"'


class Facts(NamedTuple):
    """What reads of any agent at one commit share (worked out once a commit)."""

    sha: str
    date: str  # meta.commitDate
    day: str  # the commit's day (deep reads pick timeline files by it)
    config: str | None  # the blob id of memwarden.toml (None: absent)
    encoding: str
    tokens: int  # tokens of the commit id alone plus those of the date alone


class Basis(NamedTuple):
    """What a response depends on besides the commit's id and date."""

    tree: str  # the id of memory/<agent>/
    config: str | None
    encoding: str
    day: str | None  # for modes that pick files by date


class Slot(NamedTuple):
    """One finished response: its text, the commit and date in it, what it was made of,
    and its token count without the commit id, the date and tokenCount's own digits
    (None: not reusable for another commit)."""

    text: str
    sha: str
    date: str
    basis: Basis
    rest: int | None


def tokens_alone(text: str, encoding: str) -> int:
    from memwarden.tokens.counter import get_encoder

    return len(get_encoder(encoding).encode_ordinary(text))


def make_slot(doc: dict[str, Any], text: str, basis: Basis, facts: Facts) -> Slot:
    """The slot of a response `read_memory` built at `facts.sha` (`text` is its
    serialization)."""
    from memwarden.read.budget import _digit_tokens

    whole = not doc["truncated"] and not any(e.get("reason") == "budget"
                                             for e in doc["excluded"])
    sha, date = doc["commit"], doc["meta"]["commitDate"]
    rest = None
    if whole and (sha, date) == (facts.sha, facts.date) and \
            _locate(text, sha, date) is not None:
        n = doc["tokenCount"]
        rest = n - _digit_tokens(n) + 1 - facts.tokens
    return Slot(text, sha, date, basis, rest)


def patched(slot: Slot, facts: Facts, budget: int) -> str | None:
    """The response at commit `facts.sha`, whose basis is the slot's, or None when it must
    be built afresh (cut for the budget, or over it with the new id)."""
    from memwarden.read.budget import _digit_tokens

    sha, date = facts.sha, facts.date
    if slot.rest is None or len(sha) != len(slot.sha) or len(date) != len(slot.date):
        return None
    where = _locate(slot.text, slot.sha, slot.date)
    if where is None:
        return None
    at_sha, at_count, end_count, at_date = where
    # as budget._finish: count(with tokenCount N) = count(with 0) - 1 + tokens(N)
    rest = slot.rest + facts.tokens - 1
    n = rest + 1
    while rest + _digit_tokens(n) != n:
        n = rest + _digit_tokens(n)
    if n > budget:
        return None
    t = slot.text
    return (t[:at_sha] + sha + t[at_sha + len(sha):at_count] + str(n) + t[end_count:at_date]
            + date + t[at_date + len(date):])


def _locate(text: str, sha: str, date: str) -> tuple[int, int, int, int] | None:
    """Offsets of the commit id, tokenCount's digits (start, end) and the date in a read
    response. The head fields come first (agentId is [a-z0-9-], version a number) and
    meta comes last; a quote inside any string value is escaped, so the field names
    cannot be matched inside content."""
    a = text.find(_COMMIT)
    if a < 0:
        return None
    a += len(_COMMIT)
    b = text.find(_TOKENS, a)
    if b < 0:
        return None
    b += len(_TOKENS)
    c = text.find(",", b)
    d = text.rfind(_DATE)
    if c < 0 or d < 0:
        return None
    d += len(_DATE)
    if text[a:a + len(sha)] != sha or text[d:d + len(date)] != date or \
            not text[b:c].isdigit() or text[a + len(sha)] != '"' or \
            text[d + len(date)] != '"':
        return None
    return a, b, c, d
