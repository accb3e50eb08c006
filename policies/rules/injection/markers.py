"""The patterns and tests behind each MW3xx marker family: phrase context (negation, clause
starts, waiver ids), role shouting, bracket constructs (tags, tokens, hidden HTML),
tool-call JSON keys, exfiltration URLs, encoded payloads and invisible characters."""

from __future__ import annotations

import binascii
import functools
import re
import unicodedata

from memwarden.policies.rules.injection.common import _line_pattern, _quote, lazy_in
from memwarden.policies.rules.injection.tables import _chat_tokens

_lazy = lazy_in(globals())

# A link reference definition's tail (`[label]: <url>`): the label is not a role label.
_LINK_DEF = _lazy("_LINK_DEF", r":\s*(?:[a-z][a-z0-9+.-]*:|/|#|<)")

_GROUP_WORDS = {
    "override": "asks the model to drop its instructions",
    "persona": "reassigns the model's identity",
    "announce": "announces injected instructions",
    "extract": "asks the model to reveal its prompt",
}


def _negated(low: str, pos: int) -> bool:
    before = low[max(0, pos - 10):pos]
    return bool(_NEGATION.search(before))


# A request told about, not made: "asking our triage bot to ignore its previous
# instructions". Only with a third party's instructions (its, their, his, her): an order to
# the reader ("asking you to ignore your ...", "ignore its ...") stays one.
_THIRD_PARTY = _lazy("_THIRD_PARTY", r"\b(?:its|their|his|her)\b")
_ASKED_OF = _lazy("_ASKED_OF", r"\b(?:ask(?:ed|ing|s)?|told|tell(?:ing|s)?|tried|trying|tries|"
                                r"attempt(?:ed|ing|s)?|convinc\w*|trick(?:ed|ing|s)?|"
                                r"persuad\w*|get|got|getting|make|made|making|wanted?|urg\w*)"
                                r"\b(?:(?!\byou\b)[^.;:!?\n]){0,60}$")


def _told_of(low: str, start: int, end: int) -> bool:
    """Whether the phrase at start..end tells of someone asking a third party to drop that
    party's instructions (see _ASKED_OF)."""
    return (_THIRD_PARTY.search(low, start, end) is not None
            and _ASKED_OF.search(low, max(0, start - 80), start) is not None)


def _waiver_context(low: str, start: int, end: int) -> bool:
    """A rule id next to a directive word: `ignore MW303`, `MW303: off`."""
    return (_WAIVER_BEFORE.search(low, max(0, start - 24), start) is not None
            or _WAIVER_AFTER.match(low, end) is not None)


_WAIVER_WORDS = r"(?:ignore|ignored|off|disable|disabled|waive|waived|skip|allow|allowed|exempt|ok)"
_WAIVER_BEFORE = _lazy("_WAIVER_BEFORE", rf"\b(?:{_WAIVER_WORDS}|noqa|nosec)[\s:=,]*$")
_WAIVER_AFTER = _lazy("_WAIVER_AFTER", rf"\s*[:=]?\s*{_WAIVER_WORDS}\b")


def _starts_clause(low: str, pos: int) -> bool:
    """True at a line or sentence start, or after a word that introduces an announcement."""
    i = pos
    while i > 0 and low[i - 1] in " \t*_`~":
        i -= 1
    if i == 0 or low[i - 1] in "\n\r.!?:;)]>#-|\"'«“„(—–":
        return True
    m = _INTRO_WORD.search(low, max(0, i - 20), i)
    return m is not None


_INTRO_WORD = _lazy("_INTRO_WORD",
                    r"(?:important|urgent|attention|note|warning|critical|here\s+are|"
                    r"follow|these\s+are|увага|важливо|важно|внимание)\W*$")
_NEGATION = _lazy("_NEGATION", r"(?:\bnot|n't|n’t|\bnever|\bне|\bни)\s+$")


# --------------------------------------------------------------------------- rule regexes

_SHOUTED = _lazy(  # case-sensitive; the whole line must be in capitals too
    "_SHOUTED",
    r"\b(?:SYSTEM\s+(?:PROMPT|MESSAGE|INSTRUCTIONS?|OVERRIDE|NOTICE)"
    r"|(?:CORE|NEW|HIDDEN|SECRET|REAL|FOLLOW(?:\s+THE)?|IMPORTANT|URGENT"
    r"|ADMIN(?:ISTRATOR)?)\s+INSTRUCTIONS?"
    r"|ADMIN(?:ISTRATOR)?\s+(?:REQUEST|OVERRIDE|COMMAND|MESSAGE)"
    r"|INSTRUCTIONS?\s+FOR\s+(?:THE\s+)?(?:AI|ASSISTANT|MODEL|AGENT|LLM))\b")
_REACT = _lazy("_REACT", r"action\s+input\s*:\s*\S")


def _bracket_regexes() -> tuple[re.Pattern[str], ...]:
    """`<...>` and `[...]` constructs, and `](javascript:` links. Each regex starts with a
    literal character, which the regex engine finds at C speed (a class of two characters
    would be several times slower). Each is compiled on first use: many memory files
    have no `<` at all, and a hook run pays for every compile."""
    return _angle_regex(), _square_regex(), _scheme_regex()


def _token_alt(first: str) -> str:
    items = [t[1:] for t in _chat_tokens() if t.startswith(first)]
    return "|".join(re.escape(t) for t in sorted(items, key=len, reverse=True)) or "(?!)"


@functools.cache
def _angle_regex() -> re.Pattern[str]:
    danger = "script|style|iframe|frame|frameset|applet|noscript"
    with_attrs = "object|embed|meta|base|link|form"
    return re.compile(
        r"<(?:(?P<comment>!--)"
        r"|(?P<special>\|[a-z_][a-z0-9_.:\-]{0,40}\|>|｜[^｜\n<>]{1,40}｜>)"
        rf"|(?P<token>{_token_alt('<')})"
        r"|(?P<roletag>/?(?:system|system_prompt|instructions?|developer|sys)>"
        r"|/(?:user|assistant)>)"
        r"|(?P<tooltag>/?(?:tool_call|tool_use|function_call|function_calls|tool_code)>"
        r"|function=[\w.\-]+>|invoke\s+name=)"
        rf"|(?P<danger>(?P<dname>{danger})(?=[\s/>])(?!>\.(?:py|sh|js|ts|rb|md)\b)"
        rf"|(?P<aname>{with_attrs})\s+[a-z-]+\s*=)"
        r"|(?P<attrs>[a-z][a-z0-9-]*(?=\s)[^<>]{0,2000}?"
        r"(?:\son[a-z]{3,}\s*=\s*(?!\{)|\sstyle\s*=|\shidden(?=[\s/>=])"
        r"|(?:javascript|vbscript)\s*:|data:text/html|expression\s*\()"
        r"[^<>]{0,2000}(?:>|\Z|(?=<))))")


@functools.cache
def _square_regex() -> re.Pattern[str]:
    return re.compile(
        rf"\[(?:(?P<token>{_token_alt('[')})"
        r"|(?P<roletag>/?(?P<rword>system|sys|developer|assistant|user|human|instructions?)\]"
        r"|(?:admin|administrator|system|developer|sys)\s+"
        r"(?:request|override|command|message|note|instructions?)\s*(?::|\])))")


@functools.cache
def _scheme_regex() -> re.Pattern[str]:
    return re.compile(r"\](?:\(|:)\s*(?P<scheme>(?:javascript|vbscript)\s*:|data:text/html)")


_ATTR_RISK = _lazy(
    "_ATTR_RISK",
    r"[\s\"'/](?P<handler>on[a-z]{3,}\s*=\s*(?!\{)\S{0,60})"
    r"|\shidden(?P<hidden>)(?=[\s/>=])"
    r"|\sstyle\s*=\s*[\"']?[^\"'<>]*?(?P<style>display\s*:\s*none|visibility\s*:\s*hidden"
    r"|font-size\s*:\s*0(?:\.0+)?(?:px|em|rem|pt|%)?(?![.\d])|opacity\s*:\s*0(?:\.0+)?(?![.\d])"
    r"|color\s*:\s*(?:transparent|#fff(?:fff)?\b|white\b)|(?:width|height)\s*:\s*0(?:px)?(?![.\d])"
    r"|(?:left|top|text-indent)\s*:\s*-\d{3,})"
    r"|(?P<active>(?:javascript|vbscript)\s*:|data:text/html|expression\s*\()")
_KEYS = "arguments|parameters|args|params|input|tool_input|action_input|kwargs" \
        "|function_call|tool_calls|tool_use"
# A literal first character lets the regex engine skip ahead fast.
_ARGS_KEY_DQ = _lazy("_ARGS_KEY_DQ", f'"(?P<key>{_KEYS})"\\s*:')
_ARGS_KEY_SQ = _lazy("_ARGS_KEY_SQ", f"'(?P<key>{_KEYS})'\\s*:")


def _args_keys(low: str) -> list[re.Match[str]]:
    found = list(_ARGS_KEY_DQ.finditer(low))
    found += _ARGS_KEY_SQ.finditer(low)
    return sorted(found, key=lambda m: m.start())


_NAME_KEY = _lazy(
    "_NAME_KEY",
    r"[\"'](?:name|tool|tool_name|function|recipient_name|action|command)[\"']\s*:\s*"
    r"[\"'][^\"'\n]{1,100}[\"']")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+.-")
# A colon that starts `://`, ends "script:" or sits in "data:text/html" (see _colon_marks).
_COLON_MARK = _lazy("_COLON_MARK", r":(?=//|(?<=script:)|(?<=data:)text/html)")
_URL_TAIL = re.compile(r"[^\s<>\"'`)]+")


def _url_suspect(rest: str) -> bool:
    """Worth a closer look (cheap string tests first): a placeholder character, a long query
    value, or a long path segment that is not a commit or content hash."""
    if _PLACEHOLDER_CHAR.search(rest) is not None:
        return True
    q = rest.find("?")
    if q >= 0 and any(len(v) >= 32 for v in rest[q + 1:].split("&")):
        return True
    for seg in (rest if q < 0 else rest[:q]).split("/"):
        if len(seg) >= 32 and not (len(seg) in (40, 64) and _HEX_ONLY.fullmatch(seg)):
            return True
    return False


_PLACEHOLDER_CHAR = re.compile(r"[{\[$<]|%7[bB]|=\[")
_IMG_SRC = _lazy("_IMG_SRC", r"<img\b[^<>]*\bsrc\s*=\s*[\"']?$")

_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")
_B64_SAMPLE_RUN = re.compile(r"[A-Za-z0-9+/=_\-\\]{8,}")
_B64_RUN_FWD = re.compile(r"[A-Za-z0-9+/=_\-]*")
_HEX_ONLY = re.compile(r"[0-9a-fA-F]+")
_ESCAPED_HEX = _lazy("_ESCAPED_HEX", r"\\x[0-9a-fA-F]{2}(?:\\x[0-9a-fA-F]{2}){63,}")
_WRAPPED_B64 = _line_pattern(
    r"([ \t]*[A-Za-z0-9+/]{40,}={0,2}[ \t]*(?:\r?\n[ \t]*[A-Za-z0-9+/]{16,}={0,2}[ \t]*){2,})")

_PRINTABLE_ASCII = bytes(range(0x20, 0x7F)) + b"\t\n\r\x0c"  # deleted: controls remain
_INVISIBLE = _lazy(  # and the Unicode spaces, which the trigger pass needs noted
    "_INVISIBLE",
    "[\x01-\x08\x0b\x0e-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e"
    "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2028\u2029\u206a-\u206f\u3164"
    "\ufe00-\ufe0e\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e007f\U000e0100-\U000e01ef"
    # format controls of other scripts that render as nothing and split a word just as well:
    # Kaithi number signs, Egyptian hieroglyph format controls, shorthand format controls,
    # musical beam and phrase marks
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\xa0\u1680\u2000-\u200a\u202f\u205f\u3000]")
# (the Arabic letter mark U+061C is no right-to-left letter: it cannot vouch for itself)
_RTL_LETTER = _lazy("_RTL_LETTER", "[\u0590-\u061b\u061d-\u08ff\ufb1d-\ufdff\ufe70-\ufefc"
                                   "\U00010800-\U00010fff\U0001e800-\U0001efff]")


# Non-printable characters that _INVISIBLE does not look for.
_ORDINARY_CONTROLS = ("\t", "\r", "\x0c")
_ORDINARY_CONTROL_BYTES = tuple((ch, ch.encode()) for ch in _ORDINARY_CONTROLS)
# UTF-8 lead bytes of the characters _INVISIBLE looks for that str.isprintable() accepts:
# U+034F (CD), U+115F U+1160 U+17B4 U+17B5 (E1), U+3164 (E3), U+FE00-U+FE0E U+FFA0 (EF),
# U+E0100-U+E01EF (F3). tests/test_check_fast_injection.py derives this from the pattern.
_PRINTABLE_INVISIBLE_LEADS = (b"\xcd", b"\xe1", b"\xe3", b"\xef", b"\xf3")


def _surely_visible(text: str, data: bytes | None = None, blanked: str | None = None) -> bool:
    """True when _INVISIBLE matches nowhere in `text`, proven with C-speed string methods
    (~3x cheaper than the character-class scan on Cyrillic text): every character it looks
    for is either non-printable (isprintable() sees it once line breaks and the ordinary
    controls are blanked) or starts with one of a few rare UTF-8 lead bytes (looked for in
    `data`, the text's UTF-8 bytes, encoded here when not given). `blanked` may be the
    trigger scan's copy of the lower-cased text (_blanked): lower-casing keeps every
    character's printability (tests/test_injection_speed_equiv.py checks all of Unicode)."""
    if data is None:
        data = text.encode("utf-8", "surrogatepass")
    flat = text.replace("\n", " ") if blanked is None else blanked
    for ch, byte in _ORDINARY_CONTROL_BYTES:
        if byte in data:
            flat = flat.replace(ch, " ")
    if not flat.isprintable():
        return False  # (lone surrogates end here too)
    for lead in _PRINTABLE_INVISIBLE_LEADS:
        if lead in data:
            return False
    return True


def _run_bounds(text: str, p: int, floor: int) -> tuple[int, int]:
    """The maximal base64-alphabet run around `p` (not reaching back before `floor`)."""
    s = p
    floor = max(floor, 0)
    while s > floor and text[s - 1] in _B64_CHARS:
        s -= 1
    fwd = _B64_RUN_FWD.match(text, p)
    return s, (fwd.end() if fwd else p)


def _looks_random(s: str) -> bool:
    """Base64 of real data mixes upper case, lower case and digits; prose runs do not."""
    classes = (any(c.isupper() for c in s) + any(c.islower() for c in s)
               + any(c.isdigit() for c in s))
    return classes >= 2 and len(set(s)) >= 16


def _safe_unhex(s: str) -> bytes:
    try:
        return bytes.fromhex(s[: len(s) // 2 * 2])
    except ValueError:
        return b""


def _b64_preview(core: str) -> str:
    import base64  # only for a payload found: not on every hook run

    try:
        alt = b"-_" if ("-" in core or "_" in core) else None
        raw = base64.b64decode(core + "=" * (-len(core) % 4), altchars=alt)
    except (binascii.Error, ValueError):
        return ""
    return _decoded_preview(raw)


def _decoded_preview(raw: bytes) -> str:
    head = raw[:240]
    try:
        s = head.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    printable = sum(c.isprintable() or c in "\n\t" for c in s)
    if not s or printable < 0.9 * len(s):
        return ""
    return f" (decodes to text {_quote(s, 60)})"


_EXFIL_WORDS = _lazy(
    "_EXFIL_WORDS",
    r"secret|token|passw|passwd|pwd|key|credential|cred|data|conversation|history|memory|"
    r"context|prompt|info|summary|chat|message|content|text|output|env|cookie|session|email|"
    r"user|name|address|phone|card|ssn|leak|exfil|payload|dump|q\b", re.IGNORECASE)
_PLACEHOLDER_CASED = _lazy(
    "_PLACEHOLDER_CASED",
    r"\{\{[^{}]{0,80}\}\}|\$\{[^{}]{0,80}\}|\$\([^()]{0,80}\)|%7[bB]%7[bB]"
    r"|\{[A-Za-z_][\w.\- ]{0,40}\}|\[[A-Z][A-Z0-9_ ]{1,30}\]|<[A-Z][A-Z0-9_]{1,30}>"
    r"|\$[A-Z][A-Z0-9_]{2,}")
_UUID = _lazy("_UUID", r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
              re.IGNORECASE)
_BLOB = _lazy("_BLOB", r"[A-Za-z0-9+/=_%\-]{32,}")
_PCT = _lazy("_PCT", r"%[0-9A-Fa-f]{2}")


def _exfil_reason(url: str, image: bool) -> str | None:
    """Why `url` carries data out (templated or encoded values), or None."""
    scheme_end = url.find("://") + 3
    slash = url.find("/", scheme_end)
    if slash < 0:
        return None
    rest = url[slash:]
    q = rest.find("?")
    path, query = (rest, "") if q < 0 else (rest[:q], rest[q + 1:])
    if "{{" in rest or "%7b%7b" in rest.lower():
        return "template placeholder"
    for m in _PLACEHOLDER_CASED.finditer(query):
        return f"template placeholder {_quote(m.group(), 40)}"
    for m in _PLACEHOLDER_CASED.finditer(path):
        if path[m.start() - 1:m.start()] == "=":  # `/azure=[DATA]`: a parameter in the path
            return f"template placeholder {_quote(m.group(), 40)}"
    for m in _PLACEHOLDER_CASED.finditer(path):
        if _EXFIL_WORDS.search(m.group()):
            return f"template placeholder {_quote(m.group(), 40)}"
    limit = 32 if image else 48
    for part in [v.partition("=")[2] for v in query.split("&")] + path.split("/"):
        for m in _BLOB.finditer(part):
            blob = m.group()
            if len(blob) >= limit and _looks_encoded(blob):
                return f"encoded data ({len(blob)} characters)"
    return None


def _looks_encoded(blob: str) -> bool:
    """Base64/hex/percent-encoded data, as opposed to slugs, paths and search words."""
    if _UUID.fullmatch(blob):
        return False
    if _HEX_ONLY.fullmatch(blob):
        return len(blob) >= 48 and len(blob) not in (64, 128)  # content hashes are ids
    pct = blob.count("%")
    if pct * 3 >= len(blob) * 0.6:
        return True  # mostly %XX escapes: an encoded document, not words
    core = _PCT.sub("", blob)
    seps = sum(core.count(c) for c in "-_/.+~")
    classes = (any(c.isupper() for c in core) + any(c.islower() for c in core)
               + any(c.isdigit() for c in core))
    return seps * 16 <= len(core) and classes == 3 and len(set(core)) >= 16


_JOINING = (
    (0x0600, 0x06FF), (0x0700, 0x074F), (0x0750, 0x077F), (0x08A0, 0x08FF),
    (0x0900, 0x0DFF), (0x0E00, 0x0FFF), (0x1000, 0x109F), (0x1780, 0x18AF),
    (0xA980, 0xA9DF), (0xAA60, 0xAA7F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF),
    (0x1B00, 0x1B7F), (0x10A00, 0x10A5F),
)
_SPACE_SEPARATED = ((0x0E00, 0x0FFF), (0x1000, 0x109F), (0x1780, 0x17FF),
                    (0xA980, 0xA9DF), (0x1B00, 0x1B7F), (0x1A20, 0x1AAF))
_CJK = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))
_EMOJI = ((0x1F000, 0x1FAFF), (0x2300, 0x23FF), (0x2600, 0x27BF), (0x2B00, 0x2BFF),
          (0x2190, 0x21FF), (0xFE0F, 0xFE0F), (0x00A9, 0x00A9), (0x00AE, 0x00AE),
          (0x2122, 0x2122), (0x3030, 0x3030), (0x303D, 0x303D), (0x3297, 0x3299),
          (0x20E3, 0x20E3))


def _in(ranges: tuple[tuple[int, int], ...], ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in ranges)


def _letter_of(ranges: tuple[tuple[int, int], ...], ch: str) -> bool:
    return bool(ch) and _in(ranges, ch) and unicodedata.category(ch)[0] in "LM"


def _char_name(ch: str) -> str:
    name = unicodedata.name(ch, "") or _CONTROL_NAMES.get(ch, "CONTROL CHARACTER")
    return f"U+{ord(ch):04X} {name}"


_CONTROL_NAMES = {"\x08": "BACKSPACE", "\x1b": "ESCAPE", "\x7f": "DELETE",
                  "\x0b": "LINE TABULATION", "\x85": "NEXT LINE"}


def _invisible_reason(text: str, i: int) -> str | None:
    """Why the invisible character at `i` is suspicious here, or None when it is legitimate."""
    ch = text[i]
    cp = ord(ch)
    prev = text[i - 1] if i > 0 else ""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if ch == "\ufeff" and i == 0:
        return None  # a byte-order mark at the start of the file
    if ch == "\u00ad" or ch == "\u034f":
        return None  # soft hyphen / grapheme joiner: typographic, cannot reorder or hide text
    if ch == "\u200b":
        if _letter_of(_SPACE_SEPARATED, prev) and _letter_of(_SPACE_SEPARATED, nxt):
            return None
        return _char_name(ch)
    if ch == "\u200c":
        if _letter_of(_JOINING, prev) and _letter_of(_JOINING, nxt):
            return None
        return _char_name(ch)
    if ch == "\u200d":
        if prev and nxt and _in(_EMOJI, prev) and _in(_EMOJI, nxt):
            return None
        if _letter_of(_JOINING, prev) and _letter_of(_JOINING, nxt):
            return None
        return _char_name(ch)
    if 0xFE00 <= cp <= 0xFE0F:
        if prev and prev.isalpha() and ord(prev) < 0x0530:
            # no variation sequence starts with a Latin, Greek or Cyrillic letter: one
            # selector after each letter of a sentence carries hidden bytes
            return _char_name(ch) + " (variation selector after a letter)"
        base_ok = prev and not prev.isspace() and not _is_selector(prev)
        if base_ok:
            return None
        return _char_name(ch) + " (variation selector without a base character)"
    if 0xE0100 <= cp <= 0xE01EF:
        if prev and _in(_CJK, prev):
            return None
        return _char_name(ch) + " (variation selector outside an ideographic sequence)"
    if 0xE0000 <= cp <= 0xE007F:
        return None if _in_flag_tag_sequence(text, i) else f"U+{cp:04X} TAG CHARACTER"
    if ch in "\u17b4\u17b5":
        return None if _letter_of(((0x1780, 0x17FF),), prev) else _char_name(ch)
    if ch == "\u180e":
        return None if _letter_of(((0x1800, 0x18AF),), prev) else _char_name(ch)
    if ch in "\u115f\u1160\u3164\uffa0":
        return None if _letter_of(((0x1100, 0x11FF), (0xAC00, 0xD7AF)), prev) else _char_name(ch)
    return _char_name(ch)


def _is_selector(ch: str) -> bool:
    cp = ord(ch)
    return 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF


def _in_flag_tag_sequence(text: str, i: int) -> bool:
    """Emoji subdivision flags (🏴 + 2..7 tag letters + CANCEL TAG) are the one legit use."""
    s = i
    while s > 0 and 0xE0020 <= ord(text[s - 1]) <= 0xE007F:
        s -= 1
    if s == 0 or text[s - 1] != "\U0001F3F4":
        return False
    e = s
    while e < len(text) and 0xE0020 <= ord(text[e]) <= 0xE007E:
        e += 1
    return e < len(text) and text[e] == "\U000E007F" and 2 <= e - s <= 7
