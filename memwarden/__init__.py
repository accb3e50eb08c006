"""memwarden: governs a git repository that holds LLM agents' long-term memory.

The read side is importable: `memwarden.read_memory`, `memory_diff`, `search_memory`,
`memory_context`, `entity_graph` (see memwarden/read/api.py). They load lazily so
`import memwarden` stays cheap for the hooks.
"""

from __future__ import annotations

from typing import Any

from memwarden.version import __version__

__all__ = ["read_memory", "memory_diff", "search_memory", "memory_context", "entity_graph",
           "__version__"]


def __getattr__(name: str) -> Any:
    if name in __all__ and name != "__version__":
        from memwarden.read import api

        return getattr(api, name)
    raise AttributeError(f"module 'memwarden' has no attribute {name!r}")
