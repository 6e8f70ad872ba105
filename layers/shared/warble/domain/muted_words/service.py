"""Muted words (API.md "Reports and moderation"): each user's list, replaced whole, and the
reader every filtered read asks (``later``).

The list's source of truth is PostgreSQL (``warble.dal.muted_words``); readers take it from a
lease-guarded cache under the user's hash tag (``{u:<id>}:muted_words``), read with an MGET
queued in the pipeline of the page it filters, so a warm read pays no round trip for it. An
empty list is cached too (most users mute nothing: their reads must not reach the database). A
replace commits, then drops the cache, which voids any fill in flight: the viewer's next
request sees the new list.
"""

from __future__ import annotations

from typing import Any

from warble.domain.muted_words.answers import MutedWords
from warble.domain.muted_words.matcher import NOTHING, Matcher, compile_words
from warble.domain.muted_words.ports import MutedWordStore
from warble.domain.shared import Cache, Later, ReadBatch
from warble.domain.text import normalise
from warble.errors import FieldError, ValidationFailed

MAX_WORDS = 100
MAX_CHARS = 50


def checked(words: list[str]) -> list[str]:
    """The list as stored: each word trimmed, 1 to 50 characters, at most 100; a word given
    twice (the same once folded) kept once, in its first place. Else ``400 validation_error``."""
    if len(words) > MAX_WORDS:
        raise ValidationFailed([FieldError("words", f"at most {MAX_WORDS} words")])
    kept: dict[str, str] = {}
    for index, raw in enumerate(words):
        word = raw.strip()
        if not 1 <= len(word) <= MAX_CHARS:
            message = f"each word is 1 to {MAX_CHARS} characters after trimming"
            raise ValidationFailed([FieldError(f"words[{index}]", message)])
        kept.setdefault(normalise(word), word)
    return list(kept.values())


class MutedWordService:
    def __init__(self, store: MutedWordStore, cache: Cache[int]) -> None:
        self._store = store
        self._cache = cache

    def words(self, user_id: int) -> MutedWords:
        return MutedWords(self._store.words(user_id))

    def replace(self, user_id: int, words: list[str]) -> MutedWords:
        stored = checked(words)
        self._store.replace(user_id, stored)
        self._cache.invalidate(user_id)
        return MutedWords(stored)

    def later(self, batch: ReadBatch, viewer: int) -> Later[Matcher]:
        """The viewer's compiled list: one MGET queued in ``batch``; a miss reads the table and
        fills the cache under its lease."""

        def load(_missing: list[int]) -> list[Any | None]:
            return [self._store.words(viewer)]

        read = self._cache.get_many_later(batch, [viewer], load)

        def matcher() -> Matcher:
            held = read()[0]
            return compile_words(held) if held else NOTHING

        return matcher

    def many_later(self, batch: ReadBatch, user_ids: list[int]) -> Later[dict[int, Matcher]]:
        """Several users' compiled lists (a stream batch's recipients): one MGET queued in
        ``batch``; the misses read in one query and filled."""

        def load(missing: list[int]) -> list[Any | None]:
            lists = self._store.lists([user_ids[i] for i in missing])
            return [lists.get(user_ids[i], []) for i in missing]

        read = self._cache.get_many_later(batch, user_ids, load)

        def matchers() -> dict[int, Matcher]:
            return {
                uid: compile_words(held) if held else NOTHING
                for uid, held in zip(user_ids, read(), strict=True)
            }

        return matchers
