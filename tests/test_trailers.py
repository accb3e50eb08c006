"""Trailer parsing agrees with `git interpret-trailers --parse` (git is the oracle)."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwarden.trailers import find_separator, format_parsed, parse_trailers


def git_parse(message: str) -> str:
    proc = subprocess.run(["git", "-c", "core.commentChar=#", "interpret-trailers", "--parse"],
                          input=message.encode("utf-8", "surrogateescape"), capture_output=True,
                          check=True)
    return proc.stdout.decode("utf-8", "surrogateescape")


LINES = st.one_of(
    st.sampled_from([
        "", " ", "Agent-Id: archivist", "Run-Id: run_42", "Proposal-Id: p-1",
        "Signed-off-by: A U Thor <a@example.com>", "(cherry picked from commit abc)",
        "Expected-Version: 7", "Key : spaced", "key:nospace", "Human-Edit: true",
        "  continued value", "\tmore", "# a comment", "---", "--- a/file", "-- not a divider",
        "Conflicts:", "\tpath/in/conflict", "plain prose line", "Agent\u2010Id: lookalike",
        "Ключ: значення", "URL: https://x.example/a:b", ": no key", "A-B-C: v",
        "# ------------------------ >8 ------------------------", "Fixes #12",
    ]),
    st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,8}:[ ]?[a-z0-9 ]{0,10}", fullmatch=True),
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=20),
)


@st.composite
def messages(draw: st.DrawFn) -> str:
    subject = draw(st.sampled_from(["memory-update: a / r / p", "Fix things", "x"]))
    body = draw(st.lists(LINES, max_size=12))
    ending = draw(st.sampled_from(["\n", "", "\n\n"]))
    return subject + "\n" + "\n".join(body) + ending


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages())
def test_agrees_with_git(message):
    assert format_parsed(parse_trailers(message)) == git_parse(message)


@pytest.mark.parametrize("message", [
    "subj\n\nbody\n\nAgent-Id: a\nRun-Id: r1\n",
    "subj\n\nKey: v\n  cont\nOther: x\n",
    "subj\n\nSigned-off-by: a <b>\nfoo bar\nbaz qux\nX: y\n",
    "subj\nKey: v\n",
    "subj\n\nKey: v\n---\nNot: trailer\n",
    "subj\n\nKey: v\n# comment\n\n",
    "a\n\nAgent\u2010Id: x\n",
    "subj\r\n\r\nKey: v\r\n",
    "subj\rKey: v\r",
])
def test_known_cases(message):
    assert format_parsed(parse_trailers(message)) == git_parse(message)


def test_lookalike_key_is_not_a_trailer():
    assert find_separator("Agent\u2010Id: x") == -1
    assert parse_trailers("s\n\nAgent\u2010Id: x\n") == []


def test_positions():
    msg = "subject\n\nbody line\n\nAgent-Id: a\nRun-Id: r\n  folded\n"
    ts = parse_trailers(msg)
    assert [(t.key, t.value, t.line) for t in ts] == [("Agent-Id", "a", 5),
                                                       ("Run-Id", "r folded", 6)]
