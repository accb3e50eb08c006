"""bench/memory_quality.py end to end on a small case: real read, propose and apply."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "memory_quality.py"


def test_lru_keeps_the_hot_set_where_oldest_first_loses_it(tmp_path):
    # 140 background facts start facts.md near its limit: apply evicts within a few days;
    # every run cites the whole (small) hot set.
    out = tmp_path / "mq.json"
    proc = subprocess.run([sys.executable, str(BENCH), "--agents", "1", "--runs", "6",
                           "--background", "140", "--hot", "4", "--cite", "4", "--json", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lru, oldest = json.loads(out.read_text())
    assert lru["evictor"] == "lru" and oldest["evictor"] == "oldest"
    assert lru["evictionCommits"] >= 1 and oldest["evictionCommits"] >= 1
    assert lru["hotResident"] == 1.0 and lru["last10Resident"] == 1.0
    assert lru["overLimitCount"] == 0 == oldest["overLimitCount"]
    assert oldest["hotResident"] < 1.0  # the baseline evicts the oldest: the hot set
    assert "| lru | 100.0%" in proc.stdout
