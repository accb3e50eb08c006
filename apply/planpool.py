"""Plan the coming proposals of a batch in worker processes while this one lands them.

A proposal's plan (its gate, the stale check, the eviction and the bookkeeping it needs)
reads only the policy, the proposal and its agent's own folders on main. Within a batch
the proposals before it change other agents' folders, so a plan made against the batch's
start still holds at a later tip while that agent's folders and the policy are unchanged
there; the applier checks that (two tree ids and a blob id) and otherwise plans the
proposal itself. Forked workers plan in order, ahead of the applier, on the other core;
they are forked before any thread starts (a forked child gets only the forking thread,
and a lock another thread held would never be released there).
"""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable
from typing import Any

from memwarden.git.repo import Repo

Planned = tuple[str, str | None, str | None, Any]  # head, agent, pid, Plan | ProposalResult
# Plans one proposal ref in a worker: (head, agent id, proposal id, plan). Given by the
# applier, so that this module needs nothing of apply's.
Planner = Callable[[str], Planned]


def _plan_one(planner: Planner, ref: str) -> Planned | None:
    """None when planning failed: the applier then plans the proposal itself and reports
    whatever went wrong in its own words."""
    try:
        return planner(ref)
    except Exception:  # noqa: BLE001 - the applier's own attempt will say it clearly
        return None


def still_holds(repo: Repo, planned: Planned | None, head: str, start: str, tip: str) -> bool:
    """Whether a plan made against `start` is the plan for `tip`."""
    if planned is None or planned[0] != head:
        return False
    if tip == start:
        return True
    agent = planned[1]
    paths = ["memwarden.toml"]
    if agent:
        paths += [f"memory/{agent}", f"agents/{agent}"]
    return all(repo.subtree_id(tip, p) == repo.subtree_id(start, p) for p in paths)


class PlanPool:
    """Plans for `refs`, in order, from forked workers; call `next()` once per ref.

    Plain fork and pipes, no multiprocessing.Pool: worker k plans refs k, k+W, k+2W, ...
    and writes each plan to its own pipe, where the applier reads them in turn. A worker
    blocks when the applier falls behind; `close()` kills the workers and reaps them, so
    nothing waits on a queue thread (Pool.terminate could hang there)."""

    def __init__(self, refs: list[str], make_planner: Callable[[], Planner],
                 workers: int = 2) -> None:
        self._pipes: list[Any] = []
        self._pids: list[int] = []
        self._n = 0
        if len(refs) < 8 or not hasattr(os, "fork"):
            return  # not worth the processes, or no fork here: the applier plans each
        for k in range(workers):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker: plan its share, write it, never return
                code = 0
                try:
                    os.close(r)
                    planner = make_planner()
                    with os.fdopen(w, "wb") as out:
                        for ref in refs[k::workers]:
                            data = pickle.dumps(_plan_one(planner, ref),
                                                pickle.HIGHEST_PROTOCOL)
                            out.write(len(data).to_bytes(8, "big") + data)
                            out.flush()
                except BaseException:  # noqa: BLE001 - the applier plans what is missing
                    code = 1
                finally:
                    os._exit(code)
            os.close(w)
            self._pids.append(pid)
            self._pipes.append(os.fdopen(r, "rb"))

    def next(self) -> Planned | None:
        n, self._n = self._n, self._n + 1
        if not self._pipes:
            return None
        pipe = self._pipes[n % len(self._pipes)]
        try:
            size = pipe.read(8)
            if len(size) != 8:
                return None
            data = pipe.read(int.from_bytes(size, "big"))
            return pickle.loads(data)
        except Exception:  # noqa: BLE001 - a dead worker: the applier plans on its own
            return None

    def close(self) -> None:
        for pid in self._pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pipe in self._pipes:
            pipe.close()
        for pid in self._pids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        self._pipes, self._pids = [], []
