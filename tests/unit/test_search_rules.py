"""The rules of search and hashtags that need no store: API.md's hashtag rule, a tag in a path,
hot-tag shards, the people-search query and degrees, and where the stream's side runs."""

from __future__ import annotations

import pytest
from warble.domain.hashtags.service import (
    MAX_SHARDS,
    SPLIT_PER_MINUTE,
    possible_shards,
    shard_of,
    shards_for,
)
from warble.domain.search.service import clean_query, degree_of
from warble.domain.text import hashtags, tag_of
from warble.entrypoints.streams import reactions
from warble.errors import ValidationFailed
from warble.events import TweetDeleted, TweetPosted

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        ("#Python and #python, #PYTHON", ("python",)),  # once, first spelling's place
        ("#café #CAFÉ #Café", ("café",)),  # any case, any script
        ("#日本 #русский #हिन्दी", ("日本", "русский", "हिन्दी")),  # marks continue a run
        ("#123 #1a #_ #a_1", ("1a", "_", "a_1")),  # not all digits
        ("a#b _#c 1#d é#e", ()),  # preceded by a letter, digit or _
        ("(#x) ##y #z#w", ("x", "y", "z")),  # preceded by anything else; #w follows z
        ("#" + "a" * 50 + " #" + "b" * 51, ("a" * 50,)),  # 51 is no tag, not a cut one
        ("#ﬁx #Straße", ("fix", "strasse")),  # NFKC, case-folded
        ("# #! #", ()),
    ],
)
def test_the_hashtag_rule(text: str, tags: tuple[str, ...]) -> None:
    assert hashtags(text) == tags


def test_a_tag_in_a_path_is_normalised_or_refused() -> None:
    assert tag_of("Café") == "café" and tag_of("a_1") == "a_1"
    for bad in ("", "123", "a-b", "#a", "a b", "x" * 51, "\u0301a"):
        assert tag_of(bad) is None


def test_a_hot_tag_doubles_its_shards_and_deletes_find_every_old_place() -> None:
    assert shards_for(SPLIT_PER_MINUTE, 1) == 1
    assert shards_for(SPLIT_PER_MINUTE + 1, 1) == 2
    assert shards_for(5 * SPLIT_PER_MINUTE, 2) == 8
    assert shards_for(10**9, 1) == MAX_SHARDS and shards_for(0, 16) == 16  # never lowered
    ids = [7262946581234567168 + n for n in range(4096)]
    spread = {shard_of(t, 8) for t in ids}
    assert spread == set(range(8))  # Snowflakes' low bits are mostly zero: mixed first
    for t in ids[:50]:
        places = possible_shards(t, 8)
        assert {shard_of(t, 1), shard_of(t, 2), shard_of(t, 4), shard_of(t, 8)} == set(places)


@pytest.mark.parametrize(
    ("raw", "query"), [("  jo ", "jo"), ("@jose", "jose"), ("@ Ana", "Ana"), ("x" * 50, "x" * 50)]
)
def test_a_query_is_trimmed_and_loses_its_leading_at(raw: str, query: str) -> None:
    assert clean_query(raw) == query


@pytest.mark.parametrize("raw", ["", "   ", "@", "@  ", "x" * 51])
def test_a_query_out_of_bounds_is_a_400(raw: str) -> None:
    with pytest.raises(ValidationFailed):
        clean_query(raw)


def test_degrees_are_the_degree_endpoints() -> None:
    mine, second = frozenset({1, 2}), frozenset({5, 6})
    assert degree_of(1, mine, second, frozenset({9})) == 1
    assert degree_of(5, mine, second, frozenset({2})) == 2  # a friend in common, live
    assert degree_of(7, mine, second, frozenset({6})) == 3
    assert degree_of(8, mine, second, frozenset()) is None


def test_hashtags_are_a_group_of_the_tweets_streams_second_reader() -> None:
    # No reader of its own (DynamoDB Streams serves two a shard): the reactions reader runs it,
    # with a whole batch's posted and deleted tweets at once.
    subscribed = [
        (types, name) for group in reactions.groups for types, _, name in group.handlers()
    ]
    assert ((TweetPosted, TweetDeleted), "_hashtags") in subscribed
