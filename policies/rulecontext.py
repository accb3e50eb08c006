"""What a rule sees: the effective config, token counts, and (for tree rules) every file."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from memwarden.model.config import Config
from memwarden.model.layout import FileInfo
from memwarden.model.memfile import MemFile
from memwarden.tokens.counter import TokenCounter


def as_read(mf: MemFile) -> str:
    """The text a runtime reading the file's bytes as UTF-8 gets: MemFile leaves a leading
    byte-order mark out, apply and the runtimes keep it (it costs a token or more)."""
    text = mf.text or ""
    return "\ufeff" + text if mf.has_bom else text


class FileContext:
    """What a file rule sees besides the file (plain classes: no `dataclasses` import on
    the hook path)."""

    __slots__ = ("config", "counter")

    def __init__(self, config: Config, counter: TokenCounter) -> None:
        self.config = config
        self.counter = counter

    def tokens(self, mf: MemFile) -> int:
        """Token count of a file (cached by blob id), as counted by whoever reads its bytes
        as UTF-8: a byte-order mark included, as apply counts it."""
        return self.counter.count(mf.blob_id, as_read(mf))


class TreeContext:
    """Every governed file of the checked tree, loaded on demand.

    `focus` is the set of paths actually being checked (None: all of them); tree rules
    report only findings that concern the focus, so a pre-commit run on one file stays
    about that file.
    """

    def __init__(self, config: Config, counter: TokenCounter, infos: dict[str, FileInfo],
                 blob_ids: dict[str, str], loader: Callable[[str], MemFile | None],
                 focus: set[str] | None = None) -> None:
        self.config = config
        self.counter = counter
        self.infos = infos
        self.blob_ids = blob_ids
        self.loader = loader
        self.focus = focus
        self._loaded: dict[str, MemFile | None] = {}

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
        return self.counter.count(mf.blob_id, as_read(mf))

    def files(self, kind: str | None = None) -> Iterator[FileInfo]:
        for path in sorted(self.infos):
            info = self.infos[path]
            if kind is None or info.kind == kind:
                yield info

    def in_focus(self, path: str) -> bool:
        return self.focus is None or path in self.focus
