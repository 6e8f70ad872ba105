"""The rules of search and hashtags that need no store: API.md's hashtag rule, a tag in a path,
hot-tag shards, the people-search query and degrees, and the batch subscription of a stream
consumer (a failure fails exactly the records that carried its events)."""

from __future__ import annotations

import pytest
from warble.domain.hashtags.service import (
    MAX_SHARDS,
    SPLIT_PER_MINUTE,
    possible_shards,
    shard_of,
    shards_for,
)
from warble.domain.hashtags.text import hashtags, tag_of
from warble.domain.search.service import clean_query, degree_of
from warble.entrypoints.streams import BatchFailed, Consumer
from warble.errors import ValidationFailed
from warble.events import TweetPosted
from warble.settings import get_settings

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


def _record(sequence: str, tweet_id: int) -> dict:
    table = get_settings().tweets_table
    return {
        "eventID": f"e{sequence}",
        "eventName": "INSERT",
        "eventSourceARN": f"arn:aws:dynamodb:us-east-1:1:table/{table}/stream/x",
        "dynamodb": {
            "SequenceNumber": sequence,
            "Keys": {"author_id": {"N": "1"}, "tweet_id": {"N": str(tweet_id)}},
            "NewImage": {
                "author_id": {"N": "1"},
                "tweet_id": {"N": str(tweet_id)},
                "text": {"S": f"#t{tweet_id}"},
                "created_at_ms": {"N": "1"},
            },
        },
    }


def test_a_batch_subscriber_gets_the_batch_and_its_failure_fails_its_records_only() -> None:
    consumer = Consumer("Test")
    seen: list[list[int]] = []

    @consumer.on(TweetPosted)
    def _one(event: TweetPosted) -> None:
        if event.tweet_id == 2:
            raise RuntimeError("this record only")

    @consumer.on_batch(TweetPosted)
    def _all(events: list[TweetPosted]) -> None:
        seen.append([e.tweet_id for e in events])
        if any(e.hashtags == ("t3",) for e in events):
            raise RuntimeError("the batch")

    # (_handle: the handler without the entry-point skeleton, which wants a Lambda context)
    ok = consumer._handle({"Records": [_record("1", 1), _record("2", 2)]}, None)
    assert ok == {"batchItemFailures": [{"itemIdentifier": "2"}]} and seen == [[1]]
    # The batch subscriber fails: every record it was given fails with it (Lambda retries).
    with pytest.raises(BatchFailed):
        consumer._handle({"Records": [_record("3", 3), _record("5", 5)]}, None)
    assert seen[-1] == [3, 5]
