"""Muted words' matching rule (API.md "Reports and moderation", docs/moderation.md), compiled
once per read: a tweet's text is tokenised once and each token looked up in sets, so the cost of
a read does not grow with the number of muted words (no regex per word).

- Text and words compare NFKC, case-folded (``warble.domain.text.normalise``).
- A word matches whole words only: ``spoiler`` hides "Big SPOILER!" but not "spoilers". A muted
  entry of several words ("game of thrones") matches those words in a row.
- ``#tag`` hides tweets carrying that hashtag (the tweet's ``hashtags``, normalised as a tag
  page's name is). A plain word also matches the word of a hashtag ("#spoiler" is the word
  "spoiler" with a mark before it), as the words of a tweet are read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from warble.domain.text import normalise, tag_of
from warble.domain.tweets.answers import TweetAnswer

# Words are runs of letters, digits, marks and underscores (Unicode ``\w``), as a reader sees them.
_WORD = re.compile(r"\w+")


def words_of(text: str) -> list[str]:
    """The folded whole words of a text, in order."""
    return _WORD.findall(normalise(text))


@dataclass(frozen=True)
class Matcher:
    """A viewer's muted words, compiled: single words, phrases by their first word, hashtags."""

    words: frozenset[str] = frozenset()
    phrases: tuple[tuple[str, ...], ...] = ()
    tags: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.words or self.phrases or self.tags)

    def hides(self, text: str, hashtags: Iterable[str] = ()) -> bool:
        """Whether a text (with its normalised hashtags) holds a muted word."""
        if self.tags and not self.tags.isdisjoint(hashtags):
            return True
        if not self.words and not self.phrases:
            return False
        tokens = words_of(text)
        if not self.words.isdisjoint(tokens):
            return True
        for phrase in self.phrases:
            size = len(phrase)
            starts = (i for i, token in enumerate(tokens) if token == phrase[0])
            if any(tuple(tokens[i : i + size]) == phrase for i in starts):
                return True
        return False

    def hides_tweet(self, tweet: TweetAnswer, viewer: int) -> bool:
        """Whether ``viewer`` is not shown ``tweet``: its text or, for a retweet, its
        original's holds a muted word. The viewer's own tweets and retweets are never hidden,
        nor is a retweet of the viewer's own tweet."""
        if not self or int(tweet.author.id) == viewer:
            return False
        original = tweet.retweet_of
        if original is not None:
            if int(original.author.id) == viewer:
                return False
            if self.hides(original.text, original.hashtags):
                return True
        return self.hides(tweet.text, tweet.hashtags)


NOTHING = Matcher()


def compile_words(muted: Iterable[str]) -> Matcher:
    """One Matcher for a list of muted words (as stored: trimmed, 1 to 50 characters). An entry
    with no word in it (only punctuation) matches nothing."""
    words: set[str] = set()
    phrases: list[tuple[str, ...]] = []
    tags: set[str] = set()
    for raw in muted:
        if raw.startswith("#") and (tag := tag_of(raw[1:])) is not None:
            tags.add(tag)
            continue
        tokens = tuple(words_of(raw))
        if len(tokens) == 1:
            words.add(tokens[0])
        elif tokens:
            phrases.append(tokens)
    return Matcher(frozenset(words), tuple(dict.fromkeys(phrases)), frozenset(tags))
