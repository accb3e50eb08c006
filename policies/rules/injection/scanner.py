"""The MW3xx scanner: one set of passes over a text finds every marker family.

The text is lower-cased once; every pass over it starts with a literal character (a space,
`<`, `[`, a colon, a quote), which the regex engine finds at C speed, while a character
class in that place would be several times slower; most attempts then end after one class
test. The word-start scan is the big pass (an attempt per space): one search over a copy
whose line breaks and tabs are spaces finds the words after all three, both the triggers
of the phrase, role and ReAct checks and the keys of the signal patterns. Phrase, role-label
and JSON checks run only at the positions found; `://`, "script:" and "data:text/html"
come from one search for colons; long encoded runs are found through a sample of every
25th character; invisible characters are looked for only in non-ASCII text (ASCII text
gets a `bytes.translate` test for controls). Every pass is linear in the input: no pattern
can backtrack over more than a bounded window (bench/pathological_injection.py checks).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memwarden.model.findings import ERROR, WARNING
from memwarden.policies.rules.injection.common import (
    BASE64_MIN,
    CONTRACT,
    HEX_MIN,
    LAZY,
    SNIPPET_MAX,
    Hit,
    _line_end,
    _line_matches,
    _line_start,
    _quote,
    _short,
    lazy_in,
)
from memwarden.policies.rules.injection.lookalikes import reading
from memwarden.policies.rules.injection.markers import (
    _ATTR_RISK,
    _B64_CHARS,
    _B64_RUN_FWD,
    _B64_SAMPLE_RUN,
    _COLON_MARK,
    _ESCAPED_HEX,
    _GROUP_WORDS,
    _HEX_ONLY,
    _IMG_SRC,
    _INVISIBLE,
    _LINK_DEF,
    _NAME_KEY,
    _PRINTABLE_ASCII,
    _REACT,
    _RTL_LETTER,
    _SCHEME_CHARS,
    _SHOUTED,
    _URL_TAIL,
    _WRAPPED_B64,
    _angle_regex,
    _args_keys,
    _b64_preview,
    _bracket_regexes,
    _char_name,
    _decoded_preview,
    _exfil_reason,
    _invisible_reason,
    _looks_random,
    _negated,
    _run_bounds,
    _safe_unhex,
    _scheme_regex,
    _square_regex,
    _starts_clause,
    _surely_visible,
    _told_of,
    _url_suspect,
    _waiver_context,
)
from memwarden.policies.rules.injection.scorer import hits as scorer_hits
from memwarden.policies.rules.injection.signals import GATE, _occurrences, signals, word_starts
from memwarden.policies.rules.injection.signals import warm as _warm_signals
from memwarden.policies.rules.injection.tables import (
    _QUOTED_VALUE,
    _ROLE_LEAD,
    _UNICODE_SPACES,
    _action_for,
    _blanked,
    _Combined,
    _role_labels,
    _role_line,
    _trigger_actions,
    _walk_chosen,
    _walked_triggers,
)

_lazy = lazy_in(globals())

# A link reference definition whose destination is `#` or `<>` and that has a title: the
# idiom for a comment in Markdown (it defines a link nobody uses; nothing renders).
_MD_COMMENT = _lazy("_MD_COMMENT", r"""\[[^\]\n]{1,100}\]:[ \t]*(?:#|<>)[ \t]*"""
                                   r"""(?:\([^)\n]*\)|"[^"\n]*"|'[^'\n]*')""")

# Invisible-character runs reported per text at most: a report shows 50 per rule, and a
# text made of a million joiners must not cost a million reasons.
INVISIBLE_RUNS_MAX = 1000


def warm() -> None:
    """Compile now what every large scan uses: the tries and the combined patterns run at
    each word start. A caller that forks workers should call this first, so the children
    share them instead of each compiling them (and scan with the tries, the fast way for
    large inputs). Patterns that run only where a rarer word woke them (each phrase of a
    combined pattern, each signal pattern, the trie for words after Unicode spaces) are
    compiled on first use: on ordinary memory most of them never run."""
    for contract in (False, True):
        for action in _trigger_actions(contract).values():
            if action.phrases is not None:
                action.phrases.regex  # noqa: B018  (compile before a fork)
    _bracket_regexes()
    _role_line()
    for proxy in LAZY:
        proxy.compile()
    _warm_signals()


class _Scanner:
    """One pass set over one text; collects hits from every rule."""

    def __init__(self, text: str, kind: str, walk: bool | None = None,
                 data: bytes | None = None) -> None:
        self.text = text
        self.kind = kind
        self.walk = walk  # None: by size (see _walk_chosen); tests force either way
        # `text` as UTF-8 (see scan). Presence tests for ASCII characters run on these bytes:
        # exact (no UTF-8 sequence holds an ASCII byte) and a plain memchr, where the same
        # test on Cyrillic text keeps stopping at letters that share the character's low byte.
        self.data = text.encode("utf-8", "surrogatepass") if data is None else data
        # Look-alike letters read as plain ones, so every pass sees "ignore" in "ІGNORE"
        # (lookalikes.py). One character for one: offsets into `plain` are offsets into text.
        self.plain, self.low = reading(text, self.data)
        self.hits: list[Hit] = []
        self.space_breaks: list[int] = []
        self.comments: list[tuple[int, int]] = []
        self.md_comments: set[int] = set()  # the starts of the comments in Markdown's idiom
        self.url_marks: list[int] = []  # offsets of every `://` (see _colon_marks)
        self.blanked = ""  # _blanked(low), made by run()
        self.keys: dict[int, list[int]] | None = None  # signal keys found with the triggers
        self.scheme_words = False  # "script:" or "data:text/html" occurs
        self.comment_end = 0  # where the last HTML comment found ends

    def add(self, rule_id: str, severity: str, start: int, end: int, message: str,
            snippet: str | None = None) -> None:
        snip = self.text[start:end] if snippet is None else snippet
        self.hits.append(Hit(rule_id, severity, start, end, message, snip[:SNIPPET_MAX * 4]))

    def run(self) -> list[Hit]:
        if not self.text:
            return []
        text, data = self.text, self.data
        self.blanked = _blanked(self.low)
        if not text.isascii() or data.translate(None, _PRINTABLE_ASCII):
            if not _surely_visible(text, data, self.blanked):
                self._invisible()
        self._triggers()
        self._colon_marks()
        self._brackets()
        self._json_keys()
        if self.url_marks:
            self._urls()
        self._encoded()
        if "]:" in text:
            self._markdown_comments()
        if self.keys is None:
            self.keys = _occurrences(self.low, self.blanked)
        self.hits.extend(signals(text, self.low, self.kind, self.hits, self.blanked, self.keys))
        gate = self.keys.get(GATE)
        if gate is not None and self.kind != CONTRACT:
            self.hits.extend(scorer_hits(text, self.low, gate, self.hits))
        if self.comments:
            self._classify_comments()
        if not self.hits:
            return []
        if self.plain is not text:
            self._mark_folded()
        self.hits.sort(key=lambda h: (h.start, h.rule, h.end))
        return _dedupe(self.hits)

    def _mark_folded(self) -> None:
        """Say so in each finding whose text was read through look-alike letters: a
        reviewer who sees `ІGNORE` quoted must learn why it matched "ignore"."""
        text, plain = self.text, self.plain
        for i, h in enumerate(self.hits):
            if text[h.start:h.end] != plain[h.start:h.end]:
                self.hits[i] = h._replace(
                    message=h.message + " (spelled with look-alike letters, read as plain ones)")

    # ---- word-start triggers: MW303 phrases, MW301 role headers, MW308 ReAct -------------

    def _triggers(self) -> None:
        low = self.low
        cyrillic = not self.text.isascii()  # searching for Cyrillic would cost more
        actions = _trigger_actions(self.kind == CONTRACT)
        walk = self.walk
        if walk is None:
            walk = _walk_chosen(len(low), cyrillic)
        if walk:
            found: Iterable[tuple[str, int]] = _walked_triggers(low, self.space_breaks)
        else:
            found, self.keys = word_starts(low, cyrillic, self.space_breaks, self.blanked)
        for trig, pos in found:
            # The hot loop: most hits are ordinary words whose phrase regex fails at once.
            act = actions.get(trig) or _action_for(trig, actions)
            if act.phrases is not None:
                first = act.phrases.regex.match(low, pos)
                if first is not None:
                    self._phrase_found(pos, act.phrases, first)
            if act.role:
                if self.text[pos:pos + 2].isupper():  # INSTRUCTION, SYSTEM, ADMIN ...
                    self._shouted_at(_line_start(self.text, pos))
                self._role_candidate(pos)
            elif act.react:
                self._react_at(pos)

    def _phrase_found(self, pos: int, combined: _Combined, first: re.Match[str]) -> None:
        start = int(first.lastgroup[1:])  # type: ignore[index]
        for phrase in combined.phrases[start:]:
            m = first if phrase is combined.phrases[start] else phrase.regex.match(self.low, pos)
            if m is None or m.end() == pos:
                continue
            if phrase.group == "waiver-id":
                if not _waiver_context(self.low, pos, m.end()):
                    continue
                last = self.hits[-1] if self.hits else None
                if last is not None and last.rule == "MW303" and 0 <= pos - last.end < 24:
                    return  # the id of a directive already reported: `memwarden: ignore MW303`
            if not phrase.group.startswith("waiver") and (
                    _negated(self.low, pos) or _told_of(self.low, pos, m.end())):
                return
            if phrase.group == "announce" and not _starts_clause(self.low, pos):
                continue  # "two new instructions:" in prose about bytecode
            found = self.text[pos:m.end()]
            if phrase.group.startswith("waiver"):
                msg = (f"inline waiver directive {_quote(found)}: waivers live only in "
                       "memwarden.toml, a directive in a governed file is itself an injection")
            else:
                msg = f"instruction-override phrase {_quote(found)} ({_GROUP_WORDS[phrase.group]})"
            self.add("MW303", ERROR, pos, m.end(), msg)
            return

    def _role_candidate(self, pos: int) -> None:
        """A role word: a label only when it opens its line (after Markdown marks)."""
        low = self.low
        i, lo = pos, max(0, pos - 16)
        while i > lo and low[i - 1] in " \t>*+#_-":
            i -= 1
        if i > 0 and low[i - 1] not in "\n\r":
            return  # a word in the middle of a line
        ls = _line_start(low, pos)
        if not _ROLE_LEAD.fullmatch(low, ls, pos):
            return
        m = _role_line().match(low, ls)
        if m is not None and m.start("label") == pos:
            self._role_at(m)

    def _role_at(self, m: re.Match[str]) -> None:
        text, low = self.text, self.low
        label = " ".join(m.group("label").split())
        info = _role_labels().get(label)
        if info is None:
            return
        heading = m.group("hashes") is not None
        colon = m.group("colon") is not None
        bullet = m.group("bullet") is not None
        after = low[m.end():m.end() + 1]
        whole = heading and (after in ("", "\n", "\r") or colon)
        raw = text[m.start("label"):m.end("label")]
        caps = raw.isupper()
        if not heading and not raw[:1].isupper():
            return  # `system: linux` is a YAML key, not a role label
        ok = False
        if info.cls == "always":
            ok = whole or (not heading and colon)
        elif info.cls in ("strong", "label"):
            ok = (whole and (colon or caps)) or (not heading and colon and caps)
            if info.cls == "label" and not heading and colon and not bullet:
                ok = True
        elif info.cls in ("turn", "turncaps"):
            ok = colon and (heading or (not bullet and (caps or info.cls == "turn")))
            if ok and _QUOTED_VALUE.match(text, m.end()):
                ok = False  # `USER: 'maciej',` is a key in code, not a chat turn
        if not ok:
            return
        start = m.start("hashes") if heading else m.start("label")
        end = m.end("colon") if colon else m.end("label")
        self.add("MW301", ERROR, start, end,
                 f"role/system header {_quote(text[start:end].strip())}: memory text posing as "
                 "a prompt section")

    def _shouted_at(self, ls: int) -> None:
        """A short line in capitals announcing instructions: `-- CORE INSTRUCTION`."""
        le = _line_end(self.text, ls)
        line = self.text[ls:le]
        if le - ls > 80 or line.upper() != line or not _SHOUTED.search(line):
            return
        s = ls + len(line) - len(line.lstrip())
        self.add("MW301", ERROR, s, le,
                 f"role/system header {_quote(line.strip())}: a line in capitals announcing "
                 "instructions")

    def _react_at(self, pos: int) -> None:
        ls = _line_start(self.low, pos)
        if self.low[ls:pos].strip(" \t>*-") or not _REACT.match(self.low, pos):
            return
        end = _line_end(self.low, pos)
        self.add("MW308", ERROR, pos, end,
                 f"ReAct tool call {_quote(self.text[pos:end].strip())} aimed at an agent runtime")

    # ---- `<...>` and `[...]` constructs: MW301 tags, MW302 tokens, MW305 HTML, MW308 tags ---

    def _brackets(self) -> None:
        low, data = self.low, self.data
        # Matches are consumed as they come: a text of a million `<!--` must not hold a
        # million match objects at once.
        passes = []
        if b"<" in data:
            passes.append(_angle_regex().finditer(low))
        if b"[" in data:
            passes.append(_square_regex().finditer(low))
        if self.scheme_words:
            passes.append(_scheme_regex().finditer(low))
        for m in (m for found in passes for m in found):
            kind = m.lastgroup
            s, e = m.start(), m.end()
            if kind == "comment":
                self._comment(s)
            elif kind in ("special", "token"):
                self.add("MW302", ERROR, s, e,
                         f"chat-template token {_quote(self.text[s:e])} can forge a "
                         "conversation turn")
            elif kind == "roletag":
                if self._role_tag_ok(m):
                    self.add("MW301", ERROR, s, e,
                             f"role tag {_quote(self.text[s:e])}: memory text posing as a "
                             "prompt section")
            elif kind == "tooltag":
                self.add("MW308", ERROR, s, e,
                         f"tool-call tag {_quote(self.text[s:e])} aimed at an agent runtime")
            elif kind == "danger":
                name = m.group("dname") or m.group("aname")
                bare = self.low[m.end():m.end() + 1] == ">"
                if bare and self.low.find(f"</{name}", m.end(), m.end() + 4000) < 0:
                    continue  # `npm run-script <script> -- <args>`: a placeholder, no element
                self.add("MW305", ERROR, s, self._tag_end(s),
                         f"<{name}> element: active or hidden HTML in memory")
            elif kind == "attrs":
                self._attrs(s, m.end())
            elif kind == "scheme":
                tail = _URL_TAIL.match(self.text, m.end())
                end = tail.end() if tail else m.end()
                url = self.text[m.start("scheme"):end]
                self.add("MW305", ERROR, m.start("scheme"), end,
                         f"active-content link {_quote(url, 60)} in memory", url)

    def _role_tag_ok(self, m: re.Match[str]) -> bool:
        low, e = self.low, m.end()
        word = m.groupdict().get("rword")
        nxt = low[e:e + 1]
        if low[m.start()] == "[":
            if nxt == "(" and low[e + 1:e + 2] == "#":
                return True  # `[system](#context)`: a role label disguised as a link
            if nxt in ("(", "["):  # a Markdown link or reference, not a label
                return False
            if nxt == ":" and _LINK_DEF.match(low[e:e + 40]):
                return False  # link reference definition
            if word in ("user", "assistant", "human"):
                ls = _line_start(low, m.start())
                return not low[ls:m.start()].strip(" \t>") and nxt == ":"
        return True

    def _tag_end(self, s: int) -> int:
        e = self.low.find(">", s, s + SNIPPET_MAX + 1)
        return len(self.low) if e < 0 else e + 1

    def _comment(self, s: int) -> None:
        if s < self.comment_end:
            return  # an opener inside an earlier comment (or after an unclosed one)
        end = self.low.find("-->", s + 4)
        self.comment_end = len(self.low) if end < 0 else end + 3
        if end < 0:
            self.add("MW305", ERROR, s, min(len(self.text), s + SNIPPET_MAX),
                     "unclosed HTML comment hides everything after it from rendered views",
                     self.text[s:])
            return
        self.comments.append((s, end + 3))
        m = _role_line().match(self.low, s + 4)  # `<!-- SYSTEM: ...`: the comment opens a line
        if m is not None:
            self._role_at(m)

    def _markdown_comments(self) -> None:
        """The Markdown comment idiom, a link reference definition to nowhere with a title
        (`[//]: # (text)`, `[comment]: <> "text"`): it never renders, so it is a comment."""
        text = self.text
        for m in _MD_COMMENT.finditer(text):
            ls = _line_start(text, m.start())
            if len(text[ls:m.start()]) <= 3 and not text[ls:m.start()].strip(" "):
                self.comments.append((m.start(), m.end()))
                self.md_comments.add(m.start())

    def _classify_comments(self) -> None:
        """A plain comment is a warning; one that hides another marker is an error. The
        markers inside were found by the passes over the whole text."""
        if not self.comments:
            return
        import bisect  # a shared library: loaded only when needed

        inner = sorted((h.start, h.rule) for h in self.hits if h.rule != "MW305")
        starts = [st for st, _ in inner]
        for s, end in self.comments:
            kind = "Markdown comment" if s in self.md_comments else "HTML comment"
            lo, hi = bisect.bisect_right(starts, s), bisect.bisect_left(starts, end)
            found = sorted({rule for _, rule in inner[lo:hi]})
            if found:
                self.add("MW305", ERROR, s, end,
                         f"{kind} hides {', '.join(found)} marker(s) from rendered views")
            else:
                self.add("MW305", WARNING, s, end,
                         f"{kind}: text hidden from rendered views but read by the model")

    def _attrs(self, s: int, e: int) -> None:
        tag = self.low[s:e]
        for m in _ATTR_RISK.finditer(tag):
            what = m.lastgroup
            if what == "handler":
                msg = f"event handler attribute {_quote(self.text[s + m.start(1):s + m.end()])}"
            elif what == "hidden":
                msg = "`hidden` attribute hides text from rendered views"
            elif what == "active":
                msg = f"active content {_quote(m.group('active'))} in an HTML attribute"
            else:
                msg = f"inline style {_quote(self.text[s + m.start():s + m.end()].strip())} " \
                      "hides text from rendered views"
            self.add("MW305", ERROR, s, e, msg)
            return

    # ---- MW308 tool-call JSON ------------------------------------------------------------

    def _json_keys(self) -> None:
        low = self.low
        if b"{" not in self.data:  # tool-call JSON needs an object
            return
        for m in _args_keys(low):
            key = m.group("key")
            if key in ("function_call", "tool_calls", "tool_use"):
                self.add("MW308", ERROR, m.start(), m.end(),
                         f"tool-call JSON key {_quote(self.text[m.start():m.end()])} aimed at "
                         "an agent runtime")
                continue
            obj = self._object_around(m.start())
            if obj is None:
                continue
            o_start, o_end = obj
            name = _NAME_KEY.search(low, o_start, o_end)
            if name is None:
                continue
            end = min(o_end, o_start + SNIPPET_MAX)
            self.add("MW308", ERROR, o_start, end,
                     f"tool-call JSON {_quote(self.text[name.start():name.end()])} with "
                     f"{_quote(key)} aimed at an agent runtime", self.text[o_start:o_end])

    def _object_around(self, pos: int) -> tuple[int, int] | None:
        """The innermost `{...}` holding `pos` (bounded look-around), or None."""
        low = self.low
        depth, i = 0, pos
        lo = max(0, pos - 2000)
        while i > lo:
            i -= 1
            c = low[i]
            if c == "}":
                depth += 1
            elif c == "{":
                if depth == 0:
                    break
                depth -= 1
        else:
            return None
        start, depth, j = i, 0, i
        hi = min(len(low), pos + 4000)
        while j < hi:
            c = low[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return start, j + 1
            j += 1
        return start, hi

    # ---- MW306 exfiltration URLs ----------------------------------------------------------

    def _colon_marks(self) -> None:
        """The colons two passes start from, found in one pass over the text: every `://`
        (_urls) and whether "script:" or "data:text/html" occurs (_brackets). Three
        substring searches cost twice as much as one search for a colon, which the regex
        engine finds at C speed, and colons are few."""
        low = self.low
        for m in _COLON_MARK.finditer(low):
            i = m.start()
            if low.startswith("//", i + 1):
                self.url_marks.append(i)
            if (i >= 6 and low.startswith("script:", i - 6)
                    or i >= 4 and low.startswith("data:text/html", i - 4)):
                self.scheme_words = True  # (both at once in "javascript://")

    def _urls(self) -> None:
        low, text = self.low, self.text
        marks, k = self.url_marks, 0
        while k < len(marks):
            i = marks[k]
            tail = _URL_TAIL.match(text, i + 3)
            end = tail.end() if tail else i + 3
            start = i
            while start > 0 and i - start < 16 and low[start - 1] in _SCHEME_CHARS:
                start -= 1
            while start < i and not low[start].isalpha():
                start += 1
            if start < i and end > i + 3 and _url_suspect(text[i + 3:end]):
                url = text[start:end].rstrip(".,;:!?'\"")
                reason = _exfil_reason(url, self._is_image(start))
                if reason:
                    self.add("MW306", ERROR, start, start + len(url),
                             f"{reason} in URL {_quote(_short(url))}: opening it sends data out",
                             url)
            resume = max(end, i + 3)  # the next `://` at or after this point
            while k < len(marks) and marks[k] < resume:
                k += 1

    def _is_image(self, start: int) -> bool:
        low = self.low
        ls = _line_start(low, start)
        bang = low.rfind("![", ls, start)
        if bang >= 0 and low[start - 2:start] == "](":
            if low.rfind("](", ls, start - 1) <= bang + 1:  # no other link in between
                return True
        return bool(_IMG_SRC.search(low, max(ls, start - 300), start))

    # ---- MW307 long encoded payloads -----------------------------------------------------

    def _encoded(self) -> None:
        text = self.text
        n = len(text)
        if n >= BASE64_MIN:
            # A run of >= 200 base64 characters covers >= 8 consecutive characters of every
            # 25th-character sample: look for those in the (25 times shorter) sample first.
            # Every 7th sample of such a stretch lands inside any real run it contains.
            seen_end = -1
            for m in _B64_SAMPLE_RUN.finditer(text[::25]):
                if "\\" in m.group():
                    seen_end = self._escaped_hex(m.start() * 25, m.end() * 25, seen_end)
                for k in range(m.start(), m.end(), 7):
                    p = k * 25
                    if p < seen_end or text[p] not in _B64_CHARS:
                        continue
                    e = _B64_RUN_FWD.match(text, p).end()  # type: ignore[union-attr]
                    if e - BASE64_MIN < max(seen_end, 0) or text[e - BASE64_MIN] not in \
                            _B64_CHARS or text[e - BASE64_MIN // 2] not in _B64_CHARS:
                        continue  # cheap rejections before the exact check
                    back = _B64_RUN_FWD.match(text, e - BASE64_MIN)
                    if back is None or back.end() < e:
                        continue  # the run ending at e is shorter than the threshold
                    s, e = _run_bounds(text, p, seen_end)
                    seen_end = e
                    self._payload(s, e)
        if n >= BASE64_MIN:
            for m in _line_matches(_WRAPPED_B64, text):
                s, e = m.start(1), m.end(1)
                body = "".join(m.group(1).split())
                if len(body) >= BASE64_MIN and _looks_random(body):
                    if not any(h.rule == "MW307" and h.start <= s < h.end for h in self.hits):
                        self.add("MW307", ERROR, s, e,
                                 f"base64 block of {len(body)} characters over several lines"
                                 f"{_b64_preview(body)}")

    def _escaped_hex(self, lo: int, hi: int, seen_end: int) -> int:
        """`\\x41\\x42...` runs of >= 64 bytes near a sampled stretch [lo, hi)."""
        for m in _ESCAPED_HEX.finditer(self.text, max(lo - 25, seen_end, 0), hi + 25):
            raw = _safe_unhex(m.group().replace("\\x", ""))
            self.add("MW307", ERROR, m.start(), m.end(),
                     f"escaped-hex payload of {len(raw)} bytes{_decoded_preview(raw)}")
            seen_end = m.end()
        return seen_end

    def _payload(self, s: int, e: int) -> None:
        run = self.text[s:e]
        core = run.rstrip("=")
        if _HEX_ONLY.fullmatch(core):
            if len(core) >= HEX_MIN:
                self.add("MW307", ERROR, s, e,
                         f"hex payload of {len(core)} characters"
                         f"{_decoded_preview(_safe_unhex(core))}")
            return
        if len(core) < BASE64_MIN:
            return
        std = "+" in core or "/" in core
        url = "-" in core or "_" in core
        if std and url:
            return  # mixes both base64 alphabets: an identifier or path, not a payload
        if core.count("/") * 16 > len(core) or not _looks_random(core):
            return
        self.add("MW307", ERROR, s, e,
                 f"base64 payload of {len(core)} characters{_b64_preview(core)}")

    # ---- MW304 invisible and bidi Unicode ------------------------------------------------

    def _invisible(self) -> None:
        text = self.text
        has_rtl = None
        run_start = run_end = -1
        reasons: list[str] = []
        runs = 0
        for m in _INVISIBLE.finditer(text):
            i = m.start()
            ch = text[i]
            if ch in _UNICODE_SPACES:
                self.space_breaks.append(i)
                continue
            if runs >= INVISIBLE_RUNS_MAX:
                continue  # far past what a report shows; only the spaces are still needed
            if ch in "\u200e\u200f\u061c":
                if has_rtl is None:
                    has_rtl = bool(_RTL_LETTER.search(text))
                if has_rtl:
                    continue
                why = _char_name(ch) + " (no right-to-left text here)"
            else:
                why = _invisible_reason(text, i)
                if why is None:
                    continue
            if i == run_end:
                run_end = i + 1
                if len(reasons) < 3 and why not in reasons:
                    reasons.append(why)
                continue
            if run_start >= 0:
                self._invisible_hit(run_start, run_end, reasons)
                runs += 1
            run_start, run_end, reasons = i, i + 1, [why]
        if run_start >= 0:
            self._invisible_hit(run_start, run_end, reasons)

    def _invisible_hit(self, s: int, e: int, reasons: list[str]) -> None:
        text = self.text
        tags = [c for c in text[s:e] if 0xE0000 <= ord(c) <= 0xE007F]
        hidden = ""
        if len(tags) >= 2:
            decoded = "".join(chr(ord(c) - 0xE0000) for c in tags
                              if 0x20 <= ord(c) - 0xE0000 < 0x7F)
            hidden = f"; hidden text {_quote(decoded[:60])}" if decoded else ""
        count = e - s
        what = "; ".join(reasons) + (f" (+{count - 1} more)" if count > 1 else "")
        ls = _line_start(text, s)
        le = _line_end(text, e)
        ctx_s, ctx_e = max(ls, s - 10), min(le, e + 10)
        self.add("MW304", ERROR, s, e, f"invisible/bidi character {what}{hidden}",
                 text[ctx_s:ctx_e])



def _dedupe(hits: list[Hit]) -> list[Hit]:
    out: list[Hit] = []
    seen: set[tuple[str, int]] = set()
    for h in hits:
        key = (h.rule, h.start)
        if key not in seen:
            seen.add(key)
            out.append(h)
    return out
