"""prepare-commit-msg hook: add `Human-Edit: true` when a human commit touches memory.

Never duplicates the trailer, leaves proposal/apply subjects alone, and places the
trailer exactly where git would (`git interpret-trailers`). For an empty template it
leaves line 1 free for the subject so the trailer ends up in its own paragraph.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from memwarden.git.repo import interpret_trailers_add, open_repo
from memwarden.hooks.commit_msg import index_file
from memwarden.model.errors import MemwardenError
from memwarden.model.layout import is_governed
from memwarden.model.trailers import add_trailer, cleanup_message, parse_trailers
from memwarden.policies.rules.commits import PREFIXES

TRAILER = "Human-Edit: true"


def prepare(path: Path, touched: Sequence[str], root: Path) -> bool:
    """Add the trailer to the message file if needed; True when the file changed."""
    if not any(is_governed(p) for p in touched):
        return False
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False  # commit-msg will report it; never rewrite bytes we cannot read
    cleaned = cleanup_message(text)
    if cleaned.startswith(PREFIXES):
        return False
    if any(t.key.lower() == "human-edit" for t in parse_trailers(cleaned)):
        return False
    if not cleaned.strip():
        path.write_text("\n\n" + TRAILER + "\n" + text, "utf-8")
        return True
    if not text.endswith("\n"):
        # git writes MERGE_MSG without a final newline, and interpret-trailers then glues
        # the trailer to the subject line, where git never reads it as a trailer.
        text += "\n"
    updated = interpret_trailers_add(text, TRAILER, root) or add_trailer(text, TRAILER)
    path.write_text(updated, "utf-8")
    return True


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        raise MemwardenError("prepare-commit-msg: expected the commit message file")
    repo = open_repo(Path.cwd())
    if repo is None or repo.root is None:
        return 0
    # Every source (message, template, merge, squash, commit/amend) gets the same
    # treatment: the trailer is added once, never twice, never to memwarden subjects.
    touched = repo.staged_paths(index_file(repo.root))
    prepare(Path(args[0]), touched, repo.root)
    return 0
