"""Commit-message trailers with git's exact semantics (`git interpret-trailers --parse`).

A port of git's trailer.c (2.39) block detection: the message is cut at a `---` line,
trailing comments/blank lines and the scissors line are ignored, the trailer block is the
last paragraph after the title, and it counts as trailers when all its lines are trailers
(or continuation lines), or when it holds a git-generated prefix (Signed-off-by, cherry
picked) or a configured key and at least 25% of its lines are trailers. Tests use the git
CLI as the oracle.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

COMMENT = "#"
SCISSORS = "------------------------ >8 ------------------------"
GIT_GENERATED_PREFIXES = ("Signed-off-by: ", "(cherry picked from commit ")
_WS = " \t\n\r\v\f"


@dataclass(frozen=True)
class Trailer:
    key: str
    value: str
    line: int  # 1-based line of the key in the message


def _isalnum_ascii(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z") or ("0" <= c <= "9")


def find_separator(line: str, separators: str = ":") -> int:
    """Index of the separator of `Key: value`, or -1 (git's find_separator)."""
    whitespace_found = False
    for i, c in enumerate(line):
        if c in separators:
            return i
        if not whitespace_found and (_isalnum_ascii(c) or c == "-"):
            continue
        if i != 0 and c in " \t":
            whitespace_found = True
            continue
        break
    return -1


def _lines(text: str) -> list[tuple[int, str]]:
    """(offset, line-with-newline) pairs."""
    out = []
    pos = 0
    while pos < len(text):
        nl = text.find("\n", pos)
        end = len(text) if nl < 0 else nl + 1
        out.append((pos, text[pos:end]))
        pos = end
    return out


def _is_blank(line: str) -> bool:
    return line.strip(_WS) == "" if line else True


def _find_patch_start(text: str) -> int:
    for off, line in _lines(text):
        if line.startswith("---") and len(line) > 3 and line[3] in _WS:
            return off
    return len(text)


def _scissors_cut(text: str, end: int) -> int:
    """git's wt_status_locate_end: the commented scissors line ends the message."""
    for off, line in _lines(text[:end]):
        if line.startswith(COMMENT) and line[1:].strip(_WS) == SCISSORS.strip():
            return off
    return end


def _ignore_non_trailer(text: str, end: int) -> int:
    """Bytes at the end that are comments, blank lines or an old Conflicts: block.

    Mirrors git, including its quirk that a run cannot start at offset 0 (`boc == 0`
    means "no run"), so a leading blank line is never ignored.
    """
    cutoff = _scissors_cut(text, end)
    boc = 0
    in_conflicts = False
    for off, line in _lines(text[:cutoff]):
        if line.startswith(COMMENT) or line.startswith("\n"):
            if not boc:
                boc = off
        elif line.startswith("Conflicts:\n"):
            in_conflicts = True
            if not boc:
                boc = off
        elif in_conflicts and line.startswith("\t"):
            pass
        elif boc:
            boc = 0
            in_conflicts = False
    return end - boc if boc else end - cutoff


def _find_trailer_start(text: str, end: int, known: tuple[str, ...]) -> int:
    lines = _lines(text[:end])
    end_of_title = end
    for off, line in lines:
        if line.startswith(COMMENT):
            continue
        if _is_blank(line):
            end_of_title = off
            break
    only_spaces = True
    recognized = False
    trailer_lines = non_trailer_lines = possible_cont = 0
    for off, line in reversed(lines):
        if off < end_of_title:
            break
        if line.startswith(COMMENT):
            non_trailer_lines += possible_cont
            possible_cont = 0
            continue
        if _is_blank(line):
            if only_spaces:
                continue
            non_trailer_lines += possible_cont
            if recognized and trailer_lines * 3 >= non_trailer_lines:
                return off + len(line)
            if trailer_lines and not non_trailer_lines:
                return off + len(line)
            return end
        only_spaces = False
        if line.startswith(GIT_GENERATED_PREFIXES):
            trailer_lines += 1
            possible_cont = 0
            recognized = True
            continue
        sep = find_separator(line)
        if sep >= 1 and line[0] not in _WS:
            trailer_lines += 1
            possible_cont = 0
            if not recognized and known:
                token = line[:sep].strip(_WS).lower()
                if any(token == k.lower() for k in known):
                    recognized = True
        elif line[0] in _WS:
            possible_cont += 1
        else:
            non_trailer_lines += 1 + possible_cont
            possible_cont = 0
    return end


def trailer_block(message: str, known: Iterable[str] = ()) -> tuple[int, int]:
    """(start, end) offsets of the trailer block in `message` (start == end: none)."""
    patch_start = _find_patch_start(message)
    end = patch_start - _ignore_non_trailer(message, patch_start)
    start = _find_trailer_start(message, end, tuple(known))
    return start, end


_PARSED: dict[tuple[str, tuple[str, ...]], tuple[Trailer, ...]] = {}


def parse_trailers(message: str, known: Iterable[str] = ()) -> list[Trailer]:
    """The trailers of `message`, unfolded, as `git interpret-trailers --parse` lists them.
    Remembered for a while: apply reads a proposal's trailers at several steps."""
    key = (message, tuple(known))
    hit = _PARSED.get(key)
    if hit is None:
        if len(_PARSED) >= 4096:
            _PARSED.clear()
        hit = _PARSED[key] = tuple(_parse_trailers(message, key[1]))
    return list(hit)


def _parse_trailers(message: str, known: tuple[str, ...]) -> list[Trailer]:
    start, end = trailer_block(message, known)
    first_line = message.count("\n", 0, start) + 1
    out: list[Trailer] = []
    cur_key: str | None = None
    cur_val = ""
    cur_line = 0
    for i, (_, line) in enumerate(_lines(message[start:end])):
        if line.startswith(COMMENT):
            continue
        body = line.rstrip("\n")
        if cur_key is not None and line[:1] in (" ", "\t"):
            cur_val = (cur_val + " " + body.strip(_WS)).strip(_WS) if body.strip(_WS) else cur_val
            continue
        if cur_key is not None:
            out.append(Trailer(cur_key, cur_val, cur_line))
            cur_key = None
        sep = find_separator(body)
        if sep >= 1:
            cur_key = body[:sep].strip(_WS)
            cur_val = body[sep + 1:].strip(_WS)
            cur_line = first_line + i
        elif body.startswith(GIT_GENERATED_PREFIXES[1]):
            continue
    if cur_key is not None:
        out.append(Trailer(cur_key, cur_val, cur_line))
    return out


def format_parsed(trailers: Iterable[Trailer]) -> str:
    """The text `git interpret-trailers --parse` prints for these trailers."""
    return "".join(f"{t.key}: {t.value}\n" for t in trailers)


def cleanup_message(text: str) -> str:
    """What `git commit` stores with the default cleanup (strip): comments and everything
    after the scissors line removed, trailing spaces and extra blank lines dropped."""
    kept: list[str] = []
    for line in text.split("\n"):
        if line.startswith(COMMENT):
            if line[1:].strip(_WS) == SCISSORS.strip():
                break
            continue
        kept.append(line.rstrip(_WS))
    out: list[str] = []
    for line in kept:
        if line == "" and (not out or out[-1] == ""):
            continue
        out.append(line)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n" if out else ""


def _ends_with_blank_line(text: str, length: int) -> bool:
    """git's ends_with_blank_line(buf, len): is the last line of text[:length] blank?"""
    if length == 0:
        return False
    i = text.rfind("\n", 0, length - 1) if length > 1 else -1
    line_start = i + 1
    nl = text.find("\n", line_start)
    line = text[line_start: nl + 1 if nl >= 0 else len(text)]
    return _is_blank(line)


def add_trailer(message: str, trailer: str) -> str:
    """Add `trailer` exactly where `git interpret-trailers --trailer` puts it: after the
    trailer block (or where it would start), with a separating newline when the text
    before it does not end in a blank line."""
    start, end = trailer_block(message)
    sep = "" if _ends_with_blank_line(message, start) else "\n"
    block = message[start:end]
    lines = block.split("\n")
    while lines and not lines[-1].strip(_WS):  # whitespace-only lines would split the block
        lines.pop()
    block = "\n".join(lines) + "\n" if lines else ""
    return message[:start] + sep + block + trailer.rstrip("\n") + "\n" + message[end:]
