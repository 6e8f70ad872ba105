"""The stores' ``decode_record`` and the ``StreamDecoder``, on hand-made records in AWS's exact
DynamoDB Streams shape (as Lambda delivers them). Pure functions: no table, no network."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_lambda_powertools.utilities.parser.models import DynamoDBStreamModel
from warble.dal import graph, likes, tweets
from warble.dal.streams import StreamDecoder
from warble.events import (
    Change,
    Followed,
    Liked,
    TweetDeleted,
    TweetPosted,
    Unfollowed,
    Unliked,
    UnreadableRecord,
)

from tests.conftest import ROOT

pytestmark = pytest.mark.unit

ACCOUNT = "arn:aws:dynamodb:us-east-1:123456789012"
STREAM = ACCOUNT + ":table/warble-test-{}/stream/2026-11-22T06:00:00.000"
_sequence = iter(range(4421584500000000017450439091, 4421584500000000017450440000))


def S(value: str) -> dict[str, str]:
    return {"S": value}


def N(value: int) -> dict[str, str]:
    return {"N": str(value)}


def record(
    table: str,
    name: str,
    keys: dict[str, Any],
    new: dict[str, Any] | None = None,
    old: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One stream record as Lambda delivers it (NEW_AND_OLD_IMAGES): an INSERT has a NewImage,
    a REMOVE an OldImage, a MODIFY both."""
    change: dict[str, Any] = {"ApproximateCreationDateTime": 1795327200, "Keys": keys}
    if new is not None:
        change["NewImage"] = {**keys, **new}
    if old is not None:
        change["OldImage"] = {**keys, **old}
    change.update(
        SequenceNumber=str(next(_sequence)), SizeBytes=64, StreamViewType="NEW_AND_OLD_IMAGES"
    )
    return {
        "eventID": f"{next(_sequence):x}",
        "eventName": name,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "dynamodb": change,
        "eventSourceARN": STREAM.format(table),
    }


def edge_in(followee: int, follower: int) -> dict[str, Any]:
    return {"pk": S(f"U#{followee}"), "sk": S(f"I#{follower:019d}")}


def test_the_hand_made_records_have_aws_shape():
    records = [
        record("graph", "INSERT", edge_in(2, 1), new={"uid": N(1), "seq": N(9)}),
        record("graph", "REMOVE", edge_in(2, 1), old={"uid": N(1), "seq": N(9)}),
        record("tweets", "MODIFY", {"author_id": N(1), "tweet_id": N(5)}, new={}, old={}),
    ]
    DynamoDBStreamModel.model_validate({"Records": records})


# ---- the graph table -----------------------------------------------------------------------------
def test_a_follow_is_read_from_its_incoming_edge_item():
    new = {"uid": N(11), "seq": N(900), "friend": {"BOOL": False}}
    assert graph.decode_record(record("graph", "INSERT", edge_in(22, 11), new=new)) == [
        Followed(follower=11, followee=22, seq=900)
    ]
    # The unfollow carries the follow's seq: the version that orders the two in memory.
    assert graph.decode_record(record("graph", "REMOVE", edge_in(22, 11), old=new)) == [
        Unfollowed(follower=11, followee=22, seq=900)
    ]


@pytest.mark.parametrize(
    "name, sk",
    [
        ("INSERT", "O#0000000000000000022"),  # the other edge of the same follow
        ("INSERT", "OT#0000000000000000900"),  # list items
        ("INSERT", "IT#0000000000000000900"),
        ("MODIFY", "META"),  # following_count
        ("MODIFY", "I#0000000000000000011"),  # a friend flag flipped
    ],
)
def test_every_other_graph_item_or_change_is_no_event(name: str, sk: str):
    keys = {"pk": S("U#22"), "sk": S(sk)}
    assert graph.decode_record(record("graph", name, keys, new={"uid": N(1)}, old={})) == []


@pytest.mark.parametrize(
    "keys",
    [
        {"pk": S("U#abc"), "sk": S("I#0000000000000000011")},
        {"pk": S("U#22"), "sk": S("I#eleven")},
        {"pk": S("U#22")},
        {"pk": N(22), "sk": S("I#0000000000000000011")},
    ],
)
def test_a_graph_record_with_bad_keys_is_unreadable(keys: dict[str, Any]):
    with pytest.raises(UnreadableRecord):
        graph.decode_record(record("graph", "INSERT", keys, new={}))


# ---- the tweets table ----------------------------------------------------------------------------
TWEET_KEYS = {"author_id": N(7), "tweet_id": N(700)}


def test_an_inserted_tweet_is_posted_with_its_links():
    new = {
        "text": S("hello"),
        "created_at_ms": N(1795327200000),
        "reply_to": N(600),
        "reply_to_author": N(6),
        "media_ids": {"L": [S("m1")]},
    }
    assert tweets.decode_record(record("tweets", "INSERT", TWEET_KEYS, new=new)) == [
        TweetPosted(700, 7, text="hello", reply_to=600, reply_to_author=6)
    ]
    retweet = {"text": S(""), "retweet_of": N(500), "retweet_of_author": N(5)}
    assert tweets.decode_record(record("tweets", "INSERT", TWEET_KEYS, new=retweet)) == [
        TweetPosted(700, 7, retweet_of=500, retweet_of_author=5)
    ]


def test_a_removed_tweet_is_deleted_with_the_links_of_its_old_image():
    old = {"text": S("bye"), "retweet_of": N(500), "retweet_of_author": N(5)}
    assert tweets.decode_record(record("tweets", "REMOVE", TWEET_KEYS, old=old)) == [
        TweetDeleted(700, 7, retweet_of=500)
    ]


def test_a_tweet_modified_is_no_event():
    assert tweets.decode_record(record("tweets", "MODIFY", TWEET_KEYS, new={}, old={})) == []


@pytest.mark.parametrize(
    "keys",
    [{"author_id": N(7)}, {"author_id": S("7"), "tweet_id": N(700)}, {"tweet_id": N(700)}],
)
def test_a_tweet_record_without_its_number_keys_is_unreadable(keys: dict[str, Any]):
    with pytest.raises(UnreadableRecord):
        tweets.decode_record(record("tweets", "INSERT", keys, new={}))


def test_a_tweet_link_that_is_not_an_integer_is_unreadable():
    with pytest.raises(UnreadableRecord):
        tweets.decode_record(record("tweets", "INSERT", TWEET_KEYS, new={"reply_to": {"N": "1.5"}}))


# ---- the likes table -----------------------------------------------------------------------------
LIKE_EDGE = {"pk": S("U#3"), "sk": S("T#300")}


def test_a_like_is_read_from_its_edge_item():
    image = {"seq": N(77), "author_id": N(30)}
    assert likes.decode_record(record("likes", "INSERT", LIKE_EDGE, new=image)) == [
        Liked(user_id=3, tweet_id=300, author_id=30, seq=77)
    ]
    assert likes.decode_record(record("likes", "REMOVE", LIKE_EDGE, old=image)) == [
        Unliked(user_id=3, tweet_id=300, author_id=30, seq=77)
    ]


@pytest.mark.parametrize(
    "keys",
    [
        {"pk": S("U#3"), "sk": S("LT#0000000000000000077")},
        {"pk": S("T#300"), "sk": S("LU#0000000000000000077")},
    ],
)
def test_a_likes_list_items_are_no_event(keys: dict[str, Any]):
    assert likes.decode_record(record("likes", "INSERT", keys, new={"uid": N(3)})) == []


def test_a_like_edge_with_a_bad_id_is_unreadable():
    with pytest.raises(UnreadableRecord):
        likes.decode_record(record("likes", "INSERT", {"pk": S("U#3"), "sk": S("T#x")}, new={}))


# ---- the decoder: dispatch by source table -------------------------------------------------------
@pytest.fixture
def decoder() -> StreamDecoder:
    return StreamDecoder(
        {
            "warble-test-graph": graph.decode_record,
            "warble-test-tweets": tweets.decode_record,
            "warble-test-likes": likes.decode_record,
        }
    )


def test_a_batch_decodes_record_by_record_keeping_identity_and_order(decoder: StreamDecoder):
    batch = [
        record("likes", "INSERT", LIKE_EDGE, new={"seq": N(1), "author_id": N(30)}),
        record("graph", "INSERT", {"pk": S("U#2"), "sk": S("OT#0000000000000000001")}, new={}),
        record("tweets", "REMOVE", TWEET_KEYS, old={}),
    ]
    changes = decoder.decode_batch({"Records": batch})
    assert changes == [
        Change(r["eventID"], r["dynamodb"]["SequenceNumber"], events)
        for r, events in zip(
            batch,
            [(Liked(3, 300, 30, seq=1),), (), (TweetDeleted(700, 7),)],
            strict=True,
        )
    ]


@pytest.mark.parametrize(
    "broken",
    [
        record("unknown", "INSERT", LIKE_EDGE, new={}),  # no decoder for the table
        {**record("tweets", "INSERT", TWEET_KEYS, new={}), "dynamodb": None},
        {k: v for k, v in record("graph", "INSERT", edge_in(2, 1)).items() if k != "eventName"},
        record("tweets", "INSERT", {"author_id": N(7)}, new={}),
    ],
)
def test_an_unreadable_record_is_marked_so_and_carries_no_event(decoder, broken):
    change = decoder.decode(broken)
    assert change.readable is False and change.events == ()
    assert change.event_id == broken["eventID"]


@pytest.mark.parametrize("sample", ["counters/graph-stream.json", "counters/likes-stream.json"])
def test_the_sample_events_decode(sample: str):
    event = json.loads((ROOT / "events" / sample).read_text())
    DynamoDBStreamModel.model_validate(event)
    tables = {r["eventSourceARN"].split("/")[1] for r in event["Records"]}
    decoder = StreamDecoder(
        dict.fromkeys(tables, graph.decode_record if "graph" in sample else likes.decode_record)
    )
    changes = decoder.decode_batch(event)
    assert all(c.readable for c in changes) and any(c.events for c in changes)
