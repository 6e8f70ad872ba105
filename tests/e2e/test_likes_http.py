"""Likes and engagement counters over HTTP against the local runtime (stream counters, the
deleted-tweet cleanup, and the reconciliation function run on demand)."""

from __future__ import annotations

import json

import pytest

from tests.e2e.test_tweets_http import eventually, post

pytestmark = pytest.mark.e2e


def engagement(client, tweet_id: str) -> tuple[int, int, int, bool, bool]:
    answer = client.get(f"/v1/tweets/{tweet_id}")
    assert answer.status_code == 200, answer.text
    t = answer.json()
    return (t["like_count"], t["retweet_count"], t["reply_count"], t["liked_by_me"],
            t["retweeted_by_me"])  # fmt: skip


def test_like_unlike_lists_and_counters(pair):
    me, mine, _, theirs = pair
    tweet = post(theirs, "like this")["id"]

    for _ in range(2):  # idempotent
        answer = mine.put(f"/v1/tweets/{tweet}/like")
        assert (answer.status_code, answer.json()) == (200, {"liked": True})
    assert mine.post(f"/v1/tweets/{tweet}/retweet").status_code == 201
    assert mine.post(f"/v1/tweets/{tweet}/retweet").status_code == 200
    post(mine, "a reply", reply_to=tweet)
    # (my own view counts my like and retweet at once; the author's waits for the counters)
    eventually(lambda: engagement(theirs, tweet) == (1, 1, 1, False, False))
    assert engagement(mine, tweet) == (1, 1, 1, True, True)

    likers = mine.get(f"/v1/tweets/{tweet}/likes").json()
    assert [u["id"] for u in likers["items"]] == [me["id"]] and likers["next_cursor"] is None
    liked = theirs.get(f"/v1/users/{me['id']}/likes").json()
    assert [t["id"] for t in liked["items"]] == [tweet]
    assert liked["items"][0]["liked_by_me"] is False  # the viewer's flag, not the liker's
    # My home timeline: my retweet and reply carry the engagement of what they point at.
    home = mine.get("/v1/timeline/home").json()["items"]
    retweet = next(t for t in home if t["retweet_of"])
    assert retweet["liked_by_me"] and retweet["retweet_of"]["like_count"] == 1

    for _ in range(2):
        answer = mine.delete(f"/v1/tweets/{tweet}/like")
        assert (answer.status_code, answer.json()) == (200, {"liked": False})
    assert mine.delete(f"/v1/tweets/{tweet}/retweet").status_code == 204
    eventually(lambda: engagement(mine, tweet) == (0, 0, 1, False, False))


def test_a_deleted_tweet_takes_its_likes_and_retweets_with_it(pair):
    _, mine, _, theirs = pair
    tweet = post(theirs, "soon gone")["id"]
    assert mine.put(f"/v1/tweets/{tweet}/like").status_code == 200
    assert mine.post(f"/v1/tweets/{tweet}/retweet").status_code == 201
    eventually(lambda: mine.get("/v1/users/me").json()["tweet_count"] == 1)
    assert theirs.delete(f"/v1/tweets/{tweet}").status_code == 204
    # The cleanup consumer deletes my retweet: it stops counting on me.
    eventually(lambda: mine.get("/v1/users/me").json()["tweet_count"] == 0)
    eventually(lambda: mine.get("/v1/users/me/likes").json()["items"] == [])
    assert mine.put(f"/v1/tweets/{tweet}/like").status_code == 404


def test_bad_like_input_is_a_4xx_and_writes_nothing(pair):
    _, mine, _, theirs = pair
    for method in ("put", "delete"):
        answer = getattr(mine, method)("/v1/tweets/not-a-number/like")
        assert (answer.status_code, answer.json()["error"]["code"]) == (400, "validation_error")
        answer = getattr(mine, method)("/v1/tweets/123456789/like")
        assert (answer.status_code, answer.json()["error"]["code"]) == (404, "not_found")
    assert mine.get("/v1/tweets/x/likes").status_code == 400
    assert mine.get("/v1/users/123456789/likes").status_code == 404
    tweet = post(theirs, "t")["id"]
    assert mine.get(f"/v1/tweets/{tweet}/likes", params={"limit": 101}).status_code == 400
    assert mine.get(f"/v1/tweets/{tweet}/likes", params={"cursor": "bad"}).status_code == 400
    assert mine.get("/v1/users/me/likes").json()["items"] == []


def test_reconciliation_runs_on_demand_against_the_running_stack(stack, pair):
    """`python -m infra.local schedule ReconcileFunction`: settled counters need no repair."""
    _, mine, _, theirs = pair
    tweet = post(theirs, "counted")["id"]
    assert mine.put(f"/v1/tweets/{tweet}/like").status_code == 200
    eventually(lambda: engagement(mine, tweet)[0] == 1)
    report = stack.schedule("ReconcileFunction")
    assert f"T#{tweet}" not in {r["key"] for r in report["repaired"]}
    assert engagement(mine, tweet)[0] == 1


def test_a_poison_record_reaches_the_failure_queue_and_good_likes_still_count(stack, pair):
    """A like edge with an unreadable tweet id, written to the stack's likes table: the counter
    consumer reports it, the poller retries it 5 times, then sends it to FanoutFailureQueue,
    while the likes around it are counted."""
    import boto3

    _, mine, _, theirs = pair
    tweet = post(theirs, "counted around a poison")["id"]
    aws = {"endpoint_url": stack.moto, "region_name": "us-east-1",
           "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}  # fmt: skip
    boto3.client("dynamodb", **aws).put_item(
        TableName=f"{stack.stack_name}-likes",
        Item={"pk": {"S": "U#1"}, "sk": {"S": "T#poison"}},
    )
    assert mine.put(f"/v1/tweets/{tweet}/like").status_code == 200
    eventually(lambda: engagement(mine, tweet)[0] == 1)

    sqs = boto3.client("sqs", **aws)
    queue = sqs.get_queue_url(QueueName=f"{stack.stack_name}-fanout-failures")["QueueUrl"]
    bodies: list[dict] = []

    def poison_in_queue() -> bool:
        answer = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=0)
        bodies.extend(json.loads(m["Body"]) for m in answer.get("Messages", []))
        return any(b["requestContext"]["condition"] == "RetryAttemptsExhausted" for b in bodies)

    eventually(poison_in_queue, timeout=15)
    info = bodies[-1]["DDBStreamBatchInfo"]
    assert info["streamArn"].split("/")[1] == f"{stack.stack_name}-likes"
    assert bodies[-1]["requestContext"]["approximateInvokeCount"] == 6  # 1 + 5 retries
