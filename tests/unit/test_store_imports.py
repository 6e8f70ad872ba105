"""The stores' bulk imports (what ``infra/local/seed.py`` writes, no stream) are the items their
stores write: each imported item, read back as its table's stream would bring it, decodes with
the store's own ``decode_record`` to the event of the write it stands for."""

from __future__ import annotations

from typing import Any

import pytest
from warble.dal import graph, likes, tweets
from warble.domain.tweets.ports import StoredTweet
from warble.events import Followed, Liked, TweetPosted
from warble.settings import Settings

pytestmark = pytest.mark.unit

SETTINGS = Settings()
KEYS = {"pk", "sk", "author_id", "tweet_id"}


def inserted(item: dict[str, Any]) -> dict[str, Any]:
    """An INSERT stream record of ``item`` (DynamoDB JSON, as ``serialize`` gives it)."""
    keys = {name: value for name, value in item.items() if name in KEYS}
    return {"eventName": "INSERT", "dynamodb": {"Keys": keys, "NewImage": item}}


def decoded(decode: Any, items: list[tuple[str, dict[str, Any]]], table: str) -> list[Any]:
    return [e for t, item in items if t == table for e in decode(inserted(item))]


def test_an_imported_follow_decodes_as_the_follow():
    items = graph.import_follow(SETTINGS, 11, 22, seq=333, friend=False)
    assert {table for table, _ in items} == {SETTINGS.graph_table} and len(items) == 4
    assert decoded(graph.decode_record, items, SETTINGS.graph_table) == [
        Followed(follower=11, followee=22, seq=333)
    ]
    table, meta = graph.import_meta(SETTINGS, 11, 5)
    assert table == SETTINGS.graph_table
    assert graph.decode_record(inserted(meta)) == [] and meta["following_count"] == {"N": "5"}
    assert "follower_shards" not in meta


def test_an_imported_follow_of_a_spread_account_lands_in_the_followers_shard():
    follower = next(a for a in range(100, 200) if graph.follower_shard(a, 4))
    items = graph.import_follow(SETTINGS, follower, 22, seq=333, friend=False, shards=4)
    shard = graph.follower_shard(follower, 4)
    by_sk = {item["sk"]["S"][:2]: item for _, item in items}
    assert by_sk["O#"]["shard"] == {"N": str(shard)}
    assert by_sk["I#"]["pk"] == by_sk["IT"]["pk"] == {"S": f"U#22#{shard}"}
    assert decoded(graph.decode_record, items, SETTINGS.graph_table) == [
        Followed(follower=follower, followee=22, seq=333)
    ]
    _table, meta = graph.import_meta(SETTINGS, 22, 0, follower_shards=4)
    assert meta["follower_shards"] == {"N": "4"}


def test_an_imported_like_decodes_as_the_like():
    items = likes.import_like(SETTINGS, user_id=11, tweet_id=44, author_id=22, seq=555)
    assert len(items) == 3
    assert decoded(likes.decode_record, items, SETTINGS.likes_table) == [
        Liked(user_id=11, tweet_id=44, author_id=22, seq=555)
    ]


def test_an_imported_retweet_decodes_as_the_post_with_its_index_items():
    retweet = StoredTweet(66, 11, "", 1_790_000_000_000, retweet_of=44, retweet_of_author=22)
    items = tweets.import_tweet(SETTINGS, retweet)
    index = [item for table, item in items if table == SETTINGS.tweet_index_table]
    assert sorted(i["pk"]["S"] for i in index) == ["RT#11#44", "T#66"]
    [event] = decoded(tweets.decode_record, items, SETTINGS.tweets_table)
    assert isinstance(event, TweetPosted)
    assert (event.tweet_id, event.author_id, event.retweet_of) == (66, 11, 44)
