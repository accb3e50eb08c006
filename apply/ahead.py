"""Count the coming proposals' Layer 1 tokens on the second core while this one applies.

tiktoken drops the GIL while it encodes, so a thread that reads the next proposals' Layer 1
files (at their head and at their merge base) and counts them fills count_text's memo
before apply asks: the gate's token table and limit rules, the eviction check and meta.json
then find their counts ready. It keeps at most `ahead` proposals in front of the applier,
so the memo still holds what it counted when the applier gets there. Only an
optimisation: whatever it has not counted yet, the applier counts itself.
"""

from __future__ import annotations

import threading

from memwarden.layout import LAYER1
from memwarden.repo import Repo
from memwarden.tokens import count_text


class CountAhead:
    """A daemon thread counting ahead of a batch; call `done_one()` after each proposal
    and `close()` at the end."""

    def __init__(self, repo: Repo, jobs: list[tuple[str, str]], start: str, encoding: str,
                 ahead: int = 24) -> None:
        """`jobs`: (agent, head commit) in apply order; `start`: where the batch began."""
        self._repo = Repo(repo.git_dir, repo.root)  # its own libgit2 handle
        self._jobs, self._start, self._encoding = jobs, start, encoding
        self._room = threading.Semaphore(ahead)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memwarden-count-ahead",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for agent, head in self._jobs:
                self._room.acquire()
                if self._stop.is_set():
                    return
                base = self._repo.merge_base(self._start, head)
                for rev in (head, base):
                    for name in LAYER1 if rev else ():
                        data = self._repo.read_path(rev, f"memory/{agent}/{name}")
                        if data is not None:
                            count_text(data.decode("utf-8", "replace"), self._encoding)
        except Exception:  # noqa: BLE001 - a bad ref or encoding is the applier's to report
            return

    def done_one(self) -> None:
        self._room.release()

    def close(self) -> None:
        self._stop.set()
        self._room.release()
        self._thread.join(timeout=10)
