"""`memwarden read` on a terminal shows what a terminal would act on (escape sequences,
OSC 52 clipboard writes, carriage returns, bidi overrides) as escapes; into a pipe it
prints memory byte for byte, as agents read it."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from conftest import make_repo

HOSTILE = ("# Snapshot: a\n\n## Role\n- keeper \x1b]52;c;ZWNobyBwd25lZA==\x07 of "
           "\x1b[2J\u202eenil eht\u202c\r- fine\n")


def run_on_terminal(cwd, *args: str) -> str:
    """The command's output as a terminal receives it (a real pseudo-terminal)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "memwarden", *args], cwd=cwd,
                            stdout=follower, stderr=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the other end closed
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode("utf-8")


def test_read_on_a_terminal_shows_controls_escaped_and_pipes_get_the_bytes(tmp_path):
    root = make_repo(tmp_path, {"memory/a/snapshot.md": HOSTILE,
                                "memory/a/open_loops.md": "# Open Loops: a\n"})
    for fmt in ("md", "json"):
        shown = run_on_terminal(root, "read", "a", "--format", fmt)
        assert "keeper" in shown, shown
        for ch in ("\x1b", "\x07", "\u202e", "\u202c"):
            assert ch not in shown, (fmt, ch)
        assert "\\u001b]52;c;" in shown or "\\\\u001b]52;c;" in shown, shown
    piped = subprocess.run([sys.executable, "-m", "memwarden", "read", "a", "--format", "md"],
                           cwd=root, capture_output=True, text=True).stdout
    assert "\x1b]52;c;" in piped and "\u202e" in piped  # agents read memory as it is
