"""What a rule sees: the effective config, token counts, and (for tree rules) every file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from memwarden.config import Config
from memwarden.layout import FileInfo
from memwarden.memfile import MemFile
from memwarden.tokens import TokenCounter


@dataclass
class FileContext:
    config: Config
    counter: TokenCounter

    def tokens(self, mf: MemFile) -> int:
        """Token count of a file (cached by blob id)."""
        return self.counter.count(mf.blob_id, mf.text or "")


@dataclass
class TreeContext:
    """Every governed file of the checked tree, loaded on demand.

    `focus` is the set of paths actually being checked (None: all of them); tree rules
    report only findings that concern the focus, so a pre-commit run on one file stays
    about that file.
    """

    config: Config
    counter: TokenCounter
    infos: dict[str, FileInfo]
    blob_ids: dict[str, str]
    loader: Callable[[str], MemFile | None]
    focus: set[str] | None = None
    _loaded: dict[str, MemFile | None] = field(default_factory=dict)

    def load(self, path: str) -> MemFile | None:
        if path not in self._loaded:
            self._loaded[path] = self.loader(path)
        return self._loaded[path]

    def tokens(self, path: str) -> int | None:
        blob = self.blob_ids.get(path)
        if blob is not None:
            n = self.counter.cached(blob)
            if n is not None:
                return n
        mf = self.load(path)
        if mf is None or mf.text is None:
            return None
        return self.counter.count(mf.blob_id, mf.text)

    def files(self, kind: str | None = None) -> Iterator[FileInfo]:
        for path in sorted(self.infos):
            info = self.infos[path]
            if kind is None or info.kind == kind:
                yield info

    def in_focus(self, path: str) -> bool:
        return self.focus is None or path in self.focus
