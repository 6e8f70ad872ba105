"""Tweets and home timelines over HTTP against the local runtime (stream fan-out included)."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import redis
from warble import keys

pytestmark = pytest.mark.e2e

# How long a test waits for derived data. API.md promises 5 seconds on the local stack; that is a
# speed, measured where speeds are (python -m bench streams, the stream simulation's calibration
# against the local poller), not asserted here: on a machine busy with other suites the same
# pipeline takes longer, and a test must not fail for it (issue 34 item 11).
SETTLE = 30.0


def eventually(check: Callable[[], bool], timeout: float = SETTLE) -> float:
    """Seconds until ``check()`` held; fails after ``timeout``."""
    started = time.monotonic()
    while True:
        if check():
            return time.monotonic() - started
        if time.monotonic() - started > timeout:
            pytest.fail(f"not settled within {timeout} s")
        time.sleep(0.05)


def home_ids(client: httpx.Client, limit: int = 100) -> list[str]:
    answer = client.get("/v1/timeline/home", params={"limit": limit})
    assert answer.status_code == 200, answer.text
    return [tweet["id"] for tweet in answer.json()["items"]]


def post(client: httpx.Client, text: str, **extra) -> dict:
    answer = client.post("/v1/tweets", json={"text": text, **extra})
    assert answer.status_code == 201, answer.text
    return answer.json()


def follow(client: httpx.Client, user_id: str) -> None:
    assert client.put(f"/v1/users/me/following/{user_id}").status_code == 200


def test_tweet_endpoints(pair):
    me, mine, them, theirs = pair
    tweet = post(theirs, "Cafe\u0301 time")
    assert tweet["text"] == "Caf\u00e9 time" and tweet["author"]["id"] == them["id"]
    assert tweet["created_at"].endswith("Z") and tweet["reply_to"] is None
    assert mine.get(f"/v1/tweets/{tweet['id']}").json()["id"] == tweet["id"]

    reply = post(mine, "nice", reply_to=tweet["id"])
    assert reply["reply_to"] == tweet["id"]
    replies = mine.get(f"/v1/tweets/{tweet['id']}/replies").json()
    assert [t["id"] for t in replies["items"]] == [reply["id"]] and replies["next_cursor"] is None

    retweet = mine.post(f"/v1/tweets/{tweet['id']}/retweet")
    assert retweet.status_code == 201
    body = retweet.json()
    assert body["text"] == "" and body["retweet_of"]["id"] == tweet["id"]
    again = mine.post(f"/v1/tweets/{tweet['id']}/retweet")
    assert again.status_code == 200 and again.json()["id"] == body["id"]

    mine_page = mine.get(f"/v1/users/{me['id']}/tweets", params={"limit": 1}).json()
    assert [t["id"] for t in mine_page["items"]] == [body["id"]]
    second = mine.get(
        f"/v1/users/{me['id']}/tweets", params={"limit": 1, "cursor": mine_page["next_cursor"]}
    ).json()
    assert [t["id"] for t in second["items"]] == [reply["id"]]

    assert mine.delete(f"/v1/tweets/{tweet['id']}/retweet").status_code == 204
    assert mine.delete(f"/v1/tweets/{tweet['id']}/retweet").status_code == 204
    forbidden = mine.delete(f"/v1/tweets/{tweet['id']}")
    assert forbidden.status_code == 403 and forbidden.json()["error"]["code"] == "forbidden"
    assert theirs.delete(f"/v1/tweets/{tweet['id']}").status_code == 204
    gone = mine.get(f"/v1/tweets/{tweet['id']}")
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "not_found"


def test_bad_tweet_input_gets_clear_4xx(pair):
    _, mine, _, _ = pair
    cases = [
        ({"text": "x" * 281}, 400, "validation_error"),
        ({"text": "   "}, 400, "validation_error"),
        ({"text": ""}, 400, "validation_error"),
        ({"text": "hi", "media_ids": ["1", "2", "3", "4", "5"]}, 400, "validation_error"),
        ({"text": "hi", "media_ids": ["m1"]}, 400, "invalid_media"),
        ({"text": "hi", "reply_to": "not-an-id"}, 400, "validation_error"),
        ({"text": "hi", "reply_to": "123456789"}, 404, "not_found"),
        ({"text": 5}, 400, "validation_error"),
    ]
    for body, status, code in cases:
        answer = mine.post("/v1/tweets", json=body)
        assert (answer.status_code, answer.json()["error"]["code"]) == (status, code), body
    for cursor in ("nonsense", "dXNlcjE6MQ"):
        answer = mine.get("/v1/timeline/home", params={"cursor": cursor})
        assert answer.status_code == 400, cursor
    assert mine.get("/v1/timeline/home", params={"limit": 0}).status_code == 400
    assert mine.get("/v1/tweets/abc").status_code == 400  # malformed: a client bug
    assert mine.get("/v1/tweets/123456789").status_code == 404  # well-formed, unknown
    # nothing was written by the refused requests
    assert home_ids(mine) == []


def test_followed_users_tweets_reach_my_home_timeline_and_leave_when_deleted(pair):
    _me, mine, them, theirs = pair
    follow(mine, them["id"])
    tweet = post(theirs, "fan me out")
    eventually(lambda: tweet["id"] in home_ids(mine))
    own = post(mine, "mine too")
    eventually(lambda: home_ids(mine)[:2] == [own["id"], tweet["id"]])

    assert theirs.delete(f"/v1/tweets/{tweet['id']}").status_code == 204
    eventually(lambda: tweet["id"] not in home_ids(mine))


def test_follow_backfills_and_unfollow_removes(pair):
    _me, mine, them, theirs = pair
    older = [post(theirs, f"before {i}")["id"] for i in range(3)]
    follow(mine, them["id"])
    eventually(lambda: set(older) <= set(home_ids(mine)))
    assert home_ids(mine) == older[::-1]
    assert mine.delete(f"/v1/users/me/following/{them['id']}").status_code == 200
    eventually(lambda: not set(older) & set(home_ids(mine)))


def test_home_pages_are_stable_while_tweets_arrive(pair):
    _me, mine, them, theirs = pair
    follow(mine, them["id"])
    posted = [post(theirs, f"p{i}")["id"] for i in range(6)]
    eventually(lambda: set(posted) <= set(home_ids(mine)))
    first = mine.get("/v1/timeline/home", params={"limit": 4}).json()
    newer = post(theirs, "arrives between pages")["id"]
    eventually(lambda: newer in home_ids(mine))
    second = mine.get(
        "/v1/timeline/home", params={"limit": 4, "cursor": first["next_cursor"]}
    ).json()
    seen = [t["id"] for t in first["items"] + second["items"]]
    assert seen == posted[::-1] and second["next_cursor"] is None


def test_a_celebrity_is_never_fanned_out_but_appears_in_order(stack, new_user):
    celebrity, celebrity_token = new_user("celeb")
    fans = [new_user("fan") for _ in range(4)]  # 4 followers > the e2e threshold of 3
    with stack.client(celebrity_token) as celeb:
        for _, token in fans:
            with stack.client(token) as fan:
                follow(fan, celebrity["user"]["id"])

        def followers() -> int:
            return celeb.get("/v1/users/me").json()["followers_count"]

        eventually(lambda: followers() == 4)
        tweets = [post(celeb, f"to my fans {i}")["id"] for i in range(3)]
    fan_user, fan_token = fans[0]
    with stack.client(fan_token) as fan:
        own = post(fan, "a fan's own tweet")["id"]
        # merged at read time, newest first, interleaved by id with the fan's own tweet
        eventually(lambda: home_ids(fan) == [own, *tweets[::-1]])
    # never fanned out: the celebrity's tweets are not in the fan's stored timeline
    stored = redis.Redis.from_url(stack.redis_url, decode_responses=True).zrange(
        keys.home_timeline(int(fan_user["user"]["id"])), 0, -1
    )
    assert not any(m.startswith(tuple(f"{int(t):019d}" for t in tweets)) for m in stored)


def test_a_lost_timeline_is_rebuilt_on_the_next_read(pair, stack):
    me, mine, them, theirs = pair
    follow(mine, them["id"])
    posted = [post(theirs, f"r{i}")["id"] for i in range(3)]
    own = post(mine, "mine")["id"]
    eventually(lambda: set([*posted, own]) <= set(home_ids(mine)))
    expected = home_ids(mine)
    client = redis.Redis.from_url(stack.redis_url, decode_responses=True)
    client.delete(keys.home_timeline(int(me["id"])))
    assert home_ids(mine) == expected  # rebuilt before answering: never an empty timeline
    assert client.exists(keys.home_timeline(int(me["id"])))


def test_tweet_count_follows_posts_and_deletes(pair):
    _me, mine, _, _ = pair
    first = post(mine, "one")
    post(mine, "two")
    eventually(lambda: mine.get("/v1/users/me").json()["tweet_count"] == 2)
    assert mine.delete(f"/v1/tweets/{first['id']}").status_code == 204
    eventually(lambda: mine.get("/v1/users/me").json()["tweet_count"] == 1)


def test_a_repeated_post_with_an_idempotency_key_creates_one_tweet(pair):
    me, mine, _, _ = pair
    key = {"Idempotency-Key": "post-7f3a"}
    first = mine.post("/v1/tweets", json={"text": "exactly once"}, headers=key)
    again = mine.post("/v1/tweets", json={"text": "exactly once"}, headers=key)
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json() and again.headers["idempotent-replayed"] == "true"
    tweets = mine.get(f"/v1/users/{me['id']}/tweets").json()["items"]
    assert [t["text"] for t in tweets] == ["exactly once"]

    # The same key for another request is refused; a bad key is a 400; a failed request gives
    # its key back, so the corrected retry goes through.
    other = mine.post("/v1/tweets", json={"text": "different"}, headers=key)
    assert (other.status_code, other.json()["error"]["code"]) == (409, "idempotency_key_reused")
    long_key = mine.post("/v1/tweets", json={"text": "x"}, headers={"Idempotency-Key": "k" * 65})
    assert long_key.status_code == 400
    retry_key = {"Idempotency-Key": "retry-1"}
    assert mine.post("/v1/tweets", json={"text": " "}, headers=retry_key).status_code == 400
    assert mine.post("/v1/tweets", json={"text": "fixed"}, headers=retry_key).status_code == 201

    # Racing repeats: one creates; the others replay it or are told it is in progress.
    race = {"Idempotency-Key": "race-1"}
    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(
            lambda _: mine.post("/v1/tweets", json={"text": "raced"}, headers=race), range(6)
        ))  # fmt: skip
    assert {a.status_code for a in answers} <= {201, 409}
    created = {a.json()["id"] for a in answers if a.status_code == 201}
    assert len(created) == 1
    texts = [t["text"] for t in mine.get(f"/v1/users/{me['id']}/tweets").json()["items"]]
    assert texts.count("raced") == 1
