"""The rules of the text a user writes: NFC first, then its length (a tweet, a direct message),
which of its words are hashtags (one rule for posting, the stream and a path's tag) and which
name users (mentions: the notifications and an account's deletion read them alike)."""

from __future__ import annotations

import re
import unicodedata

from warble.errors import FieldError, ValidationFailed


def normalise_text(text: str, max_chars: int, *, may_be_empty: bool = False) -> str:
    """NFC first, then the length rule: 1 to ``max_chars`` characters, not only white space
    (``may_be_empty``: a tweet with media may have no text at all)."""
    normal = unicodedata.normalize("NFC", text)
    if may_be_empty and not normal.strip():
        return ""
    if not normal.strip():
        raise ValidationFailed([FieldError("text", "must not be empty or only white space")])
    if len(normal) > max_chars:
        raise ValidationFailed([FieldError("text", f"must be at most {max_chars} characters")])
    return normal


# ---- hashtags (API.md "Search and hashtags") ---------------------------------------------------
# A hashtag is ``#`` followed by 1 to 50 letters, digits or ``_`` of any script, not all digits,
# not preceded by a letter, digit or ``_``. A run longer than 50 is no hashtag (the word is not cut
# short to make one). Combining marks continue a run: the vowel signs of Devanagari or Thai are
# marks, not letters, and a tag cut at each of them would be no tag at all. The tag is the run
# lower-cased as Unicode says (NFKC, case-folded), so ``#Café``, ``#CAFÉ`` and ``#café`` are one.
# Posting stores a tweet's tags with it; hashtag timelines and trends read them from the stream's
# images; a path's tag goes through ``tag_of``.

MAX_TAG = 50


def _word(char: str) -> bool:
    """A letter, digit or ``_`` of any script, or a mark that continues one."""
    return char == "_" or char.isalnum() or unicodedata.category(char)[0] == "M"


def normalise(raw: str) -> str:
    """NFKC, case-folded (``NFKC_Casefold`` as Unicode defines it, near enough: NFKC again after
    folding, since folding can leave a compatibility character behind)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", raw).casefold())


def valid_run(run: str) -> bool:
    return (
        0 < len(run) <= MAX_TAG
        and all(_word(c) for c in run)
        and not unicodedata.category(run[0]).startswith("M")
        and not run.isdigit()
        and not all(unicodedata.category(c) == "Nd" for c in run)
    )


def hashtags(text: str) -> tuple[str, ...]:
    """A text's tags, normalised, in order of first appearance, without repeats."""
    found: dict[str, None] = {}
    at = text.find("#")
    while at != -1:
        if at == 0 or not _word(text[at - 1]):
            end = at + 1
            while end < len(text) and _word(text[end]):
                end += 1
            run = text[at + 1 : end]
            if valid_run(run):
                found.setdefault(normalise(run), None)
            at = text.find("#", max(end, at + 1))
        else:
            at = text.find("#", at + 1)
    return tuple(found)


def tag_of(raw: str) -> str | None:
    """A tag named in a path (without ``#``, any case), normalised; None if it is no tag."""
    return normalise(raw) if valid_run(raw) else None


MENTION = re.compile(r"(?<![A-Za-z0-9_])@([A-Za-z0-9_]{1,15})(?![A-Za-z0-9_])")
MAX_MENTIONS = 10  # users notified per tweet; more names are ignored


def mentioned(text: str) -> list[str]:
    """The distinct ``@names`` of a text (lower-cased, first MAX_MENTIONS, in order)."""
    names = dict.fromkeys(m.group(1).lower() for m in MENTION.finditer(text))
    return list(names)[:MAX_MENTIONS]
