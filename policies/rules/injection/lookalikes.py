"""Look-alike letters: text spelled to slip past the word patterns while reading the same.

The scanner matches words such as "ignore" or "system" letter by letter, so an attacker
can keep a phrase readable to the model and to a reviewer while no pattern matches it.
Three such tricks are undone here, before the scanner lower-cases the text:

- compatibility letters: fullwidth (`ｉｇｎｏｒｅ`), mathematical (`𝐢𝐠𝐧𝐨𝐫𝐞`), circled,
  squared and letterlike (`ℎ`, Roman numeral `Ⅰ`) letters are read as the ASCII letter
  Unicode says they are drawn from (their NFKC form), when that is one ASCII letter, and
  so are a few letters that have no such form but read as one (dotless `ı`, phonetic
  `ɡ`, small capitals `ɪɢɴᴏʀᴇ`, Armenian `օ`), and accented Latin letters are read as
  their base letter (`ìgnore àll prévious`: NFD gives the letter and combining marks);
- mixed-script words: a word that mixes Latin, Cyrillic and Greek letters (`ІGNORE` with
  a Cyrillic І, `Рrоvidе` with Cyrillic Р, о, е, `SΥSTEM` with a Greek Υ, `αӏӏ` with a
  Greek α and Cyrillic ӏ) is read in the one script its letters can all be read in: in
  Latin when each Cyrillic and Greek letter has a Latin twin, else in Cyrillic when each
  Latin letter has a Cyrillic twin (`Пpивiт`); a word that fits neither stays as it is;
- foreign twins: a word that holds a Cyrillic letter which neither Ukrainian nor Russian
  writes but which is a twin of a Latin one (`Ѕ`, `Ј`, `Ү`, `Ӏ`, `Ԛ`, `Ԝ`, `һ`, `ԁ`) is
  read in Latin when all its letters can be (all-Cyrillic `ЅҮЅТЕМ`).

A word here is a run of ASCII, Greek and Cyrillic letters. Honest text keeps its
letters: a word wholly in one script (English, Ukrainian, Russian) is never mixed, and
words joined by a hyphen, an apostrophe, a digit or a space (`API-ключ`, `3D-модель`,
`deploy у staging`) are separate words. Out of reach: a word written wholly in Cyrillic
letters that Ukrainian or Russian also write (`ОВЕУ` for OBEY: reading those in Latin
would change honest words), and Latin look-alikes outside the small table below (Latin
letters with a hook or a stroke, such as `ƈ` or `ɨ`).

Every swap is one character for one character, so offsets into the folded text are
offsets into the original: findings quote and locate the text as it was written.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Callable

# Twins kept in their case: a capital's twin is a capital (Greek Υ reads as Y, while its
# small υ reads as u), so this runs before the scanner lower-cases the text.
TO_LATIN = str.maketrans(
    "АВЕЅІЈКМНОРСТУХҮӀԚԜ" "аеѕіјорсухүӏԛԝһԁ"  # Cyrillic
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹ" "αβεηικνορτυχγϲϳ",  # Greek
    "ABESIJKMHOPCTYXYIQW" "aesijopcyxylqwhd"
    "ABEZHIKMNOPTYXC" "abenikvoptuxycj",
)
TO_CYRILLIC = str.maketrans(
    "ABCEHIJKMOPSTXY" "aceijopsxy",
    "АВСЕНІЈКМОРЅТХУ" "асеіјорѕху",
)

# A letter that keeps a word from being read in Latin (a Greek or Cyrillic one without a
# Latin twin), or in Cyrillic (a Latin one without a Cyrillic twin, or a Greek one).
_GREEK = range(0x370, 0x400)
_CYRILLIC = range(0x400, 0x530)
_NO_LATIN_TWIN = re.compile("[" + "".join(
    chr(c) for c in (*_GREEK, *_CYRILLIC) if c not in TO_LATIN) + "]")
_NO_CYRILLIC_TWIN = re.compile("[" + "".join(
    chr(c) for c in (*range(0x41, 0x5B), *range(0x61, 0x7B), *_GREEK)
    if c not in TO_CYRILLIC) + "]")

# The script of each character, one byte per character, made from the text's UTF-8 by
# one bytes.translate: continuation bytes are dropped, so byte i stands for character i;
# an ASCII letter becomes L, the first byte of a Greek character (U+0340 to U+03FF, a few
# combining marks included) G, of a Cyrillic one (U+0400 to U+053F) C, any other byte a
# space. Mixed words and their ends are found in these bytes by plain byte searches,
# where a pattern over the text itself would stop at every letter.
_SCRIPTS = bytes(
    ord("L") if chr(b).isascii() and chr(b).isalpha() else
    ord("G") if 0xCD <= b <= 0xCF else ord("C") if 0xD0 <= b <= 0xD4 else ord(" ")
    for b in range(256))
_CONTINUATION = bytes(range(0x80, 0xC0))
# Two letters of different scripts side by side: every mixed word holds such a pair.
_PAIRS = (b"LC", b"CL")
_PAIRS_WITH_GREEK = (b"LC", b"CL", b"LG", b"GL", b"GC", b"CG")

# Cyrillic letters that Ukrainian and Russian never write, each a twin of a Latin letter.
FOREIGN_TWINS = "ЅЈҮӀԚԜѕјүӏԛԝһԁ"
_FOREIGN = re.compile(f"[{FOREIGN_TWINS}]")

# Where compatibility letters live: letterlike symbols and Roman numerals, circled
# letters, fullwidth letters, mathematical alphanumerics (whose few gaps, such as italic
# h, are filled by letterlike symbols such as ℎ), squared letters.
_COMPAT_BLOCKS = ((0x2100, 0x217F), (0x24B6, 0x24E9), (0xFF21, 0xFF5A),
                  (0x1D400, 0x1D7FF), (0x1F12B, 0x1F189))
# How the UTF-8 of those blocks starts: U+2100-U+217F and U+2480-U+24FF (E2 84, E2 85,
# E2 92, E2 93), U+FF00-U+FF7F (EF), U+1D000-U+1F17F (F0). The E2 ones are searched by a
# pattern, because E2 also starts the dashes and quotation marks that memory is full of.
_COMPAT_E2 = re.compile(rb"\xe2[\x84\x85\x92\x93]")

# Latin-1 Supplement, Latin Extended-A and -B: where the precomposed accented letters are.
_ACCENTED = (0xC0, 0x250)

# Letters without a compatibility form that read as ASCII ones: dotless ı and ȷ, the
# phonetic ɑ, ɡ and ɩ, the small capitals (`ɪɢɴᴏʀᴇ`), and the Armenian letters drawn like
# o, u, n, g, q, h (`ignօre` with an Armenian օ). English, Ukrainian and Russian memory
# never writes them (a Turkish ı read as i makes no pattern match).
LATIN_TWINS = {
    "ı": "i", "ȷ": "j", "ɑ": "a", "ɡ": "g", "ɩ": "i", "ɢ": "g", "ɪ": "i", "ɴ": "n", "ʀ": "r",
    "ʏ": "y", "ʙ": "b", "ʜ": "h", "ʟ": "l", "ᴀ": "a", "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ᴊ": "j",
    "ᴋ": "k", "ᴍ": "m", "ᴏ": "o", "ᴘ": "p", "ᴛ": "t", "ᴜ": "u", "ᴠ": "v", "ᴡ": "w", "ᴢ": "z",
    "ꜰ": "f", "ꜱ": "s", "օ": "o", "ս": "u", "ո": "n", "ց": "g", "զ": "q", "հ": "h",
}

# What the fold looks for, found in one short string that one translation of the UTF-8
# makes: the lead bytes of Greek letters (G) and of Cyrillic ones (D0-D4 as A, B, C, F, F;
# a text without either has no mixed word, and most non-ASCII memory is English with a
# dash or an emoji), the first bytes of the compatibility letters (EF, F0; E2 by the
# pattern above), of the accented Latin letters and of the Latin twins (K), and the second
# bytes of the foreign twins (x, y, z), so that Ѕ and Ј read Ax, ѕ and ј By, Ү, ү and һ Cz,
# and those led by D3 or D4 F (which lead no Ukrainian or Russian letter). Every other
# byte is dropped. A pair found where no such letter stands only costs a search of the text.
_MARKS = {0xCD: b"G", 0xCE: b"G", 0xCF: b"G", 0xD0: b"A", 0xD1: b"B", 0xD2: b"C",
          0xD3: b"F", 0xD4: b"F", 0xEF: b"K", 0xF0: b"K",
          **{lead: b"K" for lead in range(0xC3, 0xCA)},  # accented Latin, U+00C0-U+027F
          **{c.encode()[0]: b"K" for c in LATIN_TWINS},
          0x85: b"x", 0x88: b"x", 0x95: b"y", 0x98: b"y", 0xAE: b"z", 0xAF: b"z", 0xBB: b"z"}
_MARK_BYTES = bytes.maketrans(bytes(_MARKS), b"".join(_MARKS.values()))
_UNMARKED = bytes(b for b in range(256) if b not in _MARKS)
_GREEK_CYRILLIC = (b"A", b"B", b"C", b"F", b"G")
_FOREIGN_PAIRS = (b"F", b"Ax", b"By", b"Cz")


@functools.cache
def _compat() -> dict[int, str]:
    """The compatibility letters to ASCII. Built on first use: some 1,800 NFKC
    look-ups, which memory without such letters never needs."""
    table = {}
    for lo, hi in _COMPAT_BLOCKS:
        for cp in range(lo, hi + 1):
            plain = unicodedata.normalize("NFKC", chr(cp))
            # One ASCII letter or nothing: NFKC also yields "No" for №, "IV" for Ⅳ, "0"
            # for a bold digit; only a one-for-one letter keeps offsets and reads as text.
            if len(plain) == 1 and plain.isascii() and plain.isalpha():
                table[cp] = plain
    # Accented Latin letters (`ìgnore àll prévious`) read as their base letter: the NFD
    # form is that ASCII letter and combining marks only.
    for cp in range(*_ACCENTED):
        base = unicodedata.normalize("NFD", chr(cp))
        if len(base) > 1 and base[0].isascii() and base[0].isalpha() and all(
                unicodedata.combining(c) for c in base[1:]):
            table[cp] = base[0]
    table.update((ord(c), plain) for c, plain in LATIN_TWINS.items())
    return table


def fold(text: str, data: bytes) -> str:
    """`text` (`data` its UTF-8) with look-alike letters read as plain ones: a string of
    the same length, `text` itself when no letter changed."""
    marks = data.translate(_MARK_BYTES, _UNMARKED)
    if b"K" in marks or _COMPAT_E2.search(data):
        plain = text.translate(_compat())  # `№` and `™` share the blocks: may change nothing
        if plain != text:
            text = plain
            data = text.encode("utf-8", "surrogatepass")  # its new letters can be mixed
            marks = data.translate(_MARK_BYTES, _UNMARKED)
    if not any(lead in marks for lead in _GREEK_CYRILLIC):
        return text
    scripts = data.translate(_SCRIPTS, _CONTINUATION)
    if len(scripts) != len(text):  # not the text's UTF-8 after all: offsets come first
        data = text.encode("utf-8", "surrogatepass")
        scripts = data.translate(_SCRIPTS, _CONTINUATION)
        marks = data.translate(_MARK_BYTES, _UNMARKED)
    next_pair = _pair_finder(scripts, _PAIRS_WITH_GREEK if b"G" in scripts else _PAIRS)
    if any(pair in marks for pair in _FOREIGN_PAIRS):
        next_pair = _with_foreign(next_pair, [m.start() for m in _FOREIGN.finditer(text)])
    i = next_pair(0)
    if i < 0:
        return text
    out: list[str] = []
    copied = 0  # text[:copied] is in out
    while i >= 0:
        # The word around the pair or the foreign twin: its run of Latin, Greek and Cyrillic
        # letters. The space before it is at or after the last word's end, so each byte is
        # read once.
        s = scripts.rfind(b" ", 0, i) + 1
        e = scripts.find(b" ", i + 1)
        if e < 0:
            e = len(scripts)
        word = text[s:e]
        plain = _read(word)
        if plain != word:
            out += (text[copied:s], plain)
            copied = e
        i = next_pair(e)
    if not out:
        return text
    out.append(text[copied:])
    return "".join(out)


def reading(text: str, data: bytes | None = None) -> tuple[str, str]:
    """(plain, low): `text` as every injection rule reads it, its look-alike letters read as
    plain ones (fold), and that lower-cased; both one character for one with `text`, so
    offsets into either are offsets into `text`. `data`: `text` as UTF-8, if known. The
    evaluation's leave-one-source-out scorers read text through this too."""
    if text.isascii():
        plain = text
    else:
        plain = fold(text, text.encode("utf-8", "surrogatepass") if data is None else data)
    low = plain.lower()
    if len(low) != len(plain):  # a few characters (e.g. U+0130) lower-case to two
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in plain)
    return plain, low


def _pair_finder(scripts: bytes, pairs: tuple[bytes, ...]) -> Callable[[int], int]:
    """A function giving the first offset at or after `pos` where one of `pairs` stands
    in `scripts` (-1: none). Called with growing positions, each pair's search resumes
    past its last find, so all calls together read the bytes once per pair."""
    found = dict.fromkeys(pairs, -2)  # -2: not searched yet, -1: no more

    def next_pair(pos: int) -> int:
        best = -1
        for pair in pairs:
            i = found[pair]
            if -2 <= i < pos and i != -1:
                i = found[pair] = scripts.find(pair, pos)
            if i >= 0 and (best < 0 or i < best):
                best = i
        return best

    return next_pair


def _with_foreign(next_pair: Callable[[int], int], foreign: list[int]) -> Callable[[int], int]:
    """`next_pair` that also stops at the foreign twins (`foreign`: their offsets, ascending)."""

    def next_at(pos: int) -> int:
        i = next_pair(pos)
        j = bisect.bisect_left(foreign, pos)
        f = foreign[j] if j < len(foreign) else -1
        return f if f >= 0 and (i < 0 or f < i) else i

    return next_at


def _read(word: str) -> str:
    """A mixed word (or one with a foreign twin) in the one script all its letters can be
    read in; the word itself when there is none. Latin first: a word of twins only
    (`ассеss`) is an English word in disguise far more often than a Cyrillic one."""
    if not _NO_LATIN_TWIN.search(word):
        return word.translate(TO_LATIN)
    if not _NO_CYRILLIC_TWIN.search(word):
        return word.translate(TO_CYRILLIC)
    return word
