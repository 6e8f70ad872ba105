"""The population generator (`python -m infra.local seed --small`) against the local stack: what
the API reports for every seeded user and tweet equals what the plan implies, and the streams
go on from the seeded state (a new follow counts on top of the seeded followers)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from tests.conftest import ROOT

MENTION = re.compile(r"(?<![A-Za-z0-9_])@([A-Za-z0-9_]{1,15})(?![A-Za-z0-9_])")


@pytest.fixture(scope="module")
def seeded(stack, tmp_path_factory) -> dict:
    manifest = tmp_path_factory.mktemp("seed") / "population.json"
    command = [
        sys.executable, "-m", "infra.local", "seed", "--small", "--seed", "7", "--quiet",
        "--endpoint-url", stack.moto, "--stack-name", stack.stack_name,
        "--env-vars", str(stack.env_file), "--manifest", str(manifest),
    ]  # fmt: skip
    ran = subprocess.run(command, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return json.loads(Path(manifest).read_text())


def _expected(doc: dict) -> dict:
    plan = doc["plan"]
    ids = [u["id"] for u in doc["users"]]
    by_name = {u["username"].lower(): u["id"] for u in doc["users"]}
    follows = {tuple(edge) for edge in plan["follows"]}
    tweets = {t["id"]: t for t in plan["tweets"]}
    authored: dict[str, list[str]] = defaultdict(list)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    unread: dict[str, Counter[str]] = defaultdict(Counter)
    for _, b in follows:
        unread[b]["follow"] += 1
    for t in plan["tweets"]:
        authored[t["author"]].append(t["id"])
        if t["reply_to"]:
            counts[t["reply_to"]]["reply_count"] += 1
            parent = tweets[t["reply_to"]]["author"]
            if parent != t["author"]:
                unread[parent]["reply"] += 1
        if t["retweet_of"]:
            counts[t["retweet_of"]]["retweet_count"] += 1
            unread[tweets[t["retweet_of"]]["author"]]["retweet"] += 1
        else:
            parent = tweets[t["reply_to"]]["author"] if t["reply_to"] else None
            named = dict.fromkeys(m.lower() for m in MENTION.findall(t["text"]))
            for uid in dict.fromkeys(by_name[n] for n in list(named)[:10] if n in by_name):
                if uid not in (t["author"], parent):
                    unread[uid]["mention"] += 1
    for user, tweet in plan["likes"]:
        counts[tweet]["like_count"] += 1
        if tweets[tweet]["author"] != user:
            unread[tweets[tweet]["author"]]["like"] += 1
    return {
        "ids": ids,
        "follows": follows,
        "authored": authored,
        "tweet_counts": counts,
        "unread": unread,
    }


def _status(follows: set, a: str, b: str) -> str:
    out, into = (a, b) in follows, (b, a) in follows
    return {(True, True): "friends", (True, False): "following", (False, True): "followed_by"}.get(
        (out, into), "none"
    )


def test_every_seeded_user_and_tweet_reads_as_planned(stack, seeded) -> None:
    # given the small population, and what its plan implies
    expect = _expected(seeded)
    ids, follows = expect["ids"], expect["follows"]
    followers = Counter(b for _, b in follows)
    following = Counter(a for a, _ in follows)
    tokens = {}
    with stack.client() as anonymous:
        for user in seeded["users"]:
            login = {"login": user["username"], "password": seeded["password"]}
            answer = anonymous.post("/v1/auth/login", json=login)
            assert answer.status_code == 200, answer.text
            tokens[user["id"]] = answer.json()["token"]

    mismatches: list[str] = []
    for uid in ids:
        with stack.client(tokens[uid]) as client:
            # when each user reads their profile, home, relationships, tweets and counts
            profile = client.get(f"/v1/users/{uid}").json()
            got = (profile["followers_count"], profile["following_count"], profile["tweet_count"])
            want = (followers[uid], following[uid], len(expect["authored"][uid]))
            if got != want:
                mismatches.append(f"{uid} counts {got} != {want}")

            # (ids are Snowflakes minted in posting order: newest first is the largest first)
            visible = [
                t
                for a in [uid, *(b for a, b in follows if a == uid)]
                for t in expect["authored"][a]
            ]
            want_home = sorted(visible, key=int, reverse=True)[:20]
            home = [t["id"] for t in client.get("/v1/timeline/home?limit=20").json()["items"]]
            if home != want_home:
                mismatches.append(f"{uid} home {home[:3]}... != {want_home[:3]}...")

            others = [o for o in ids if o != uid]
            items = client.get(f"/v1/users/me/relationships?ids={','.join(others)}").json()["items"]
            got_status = {i["user_id"]: i["status"] for i in items}
            want_status = {o: _status(follows, uid, o) for o in others}
            if got_status != want_status:
                mismatches.append(f"{uid} relationships differ")

            # (a retweet shows its original's counts, as the API renders it)
            mine = client.get(f"/v1/users/{uid}/tweets?limit=100").json()["items"]
            for tweet in mine:
                subject = tweet["retweet_of"]["id"] if tweet["retweet_of"] else tweet["id"]
                got_counts = {k: tweet[k] for k in ("like_count", "retweet_count", "reply_count")}
                want_counts = {k: expect["tweet_counts"][subject][k] for k in got_counts}
                if got_counts != want_counts:
                    mismatches.append(f"tweet {tweet['id']} {got_counts} != {want_counts}")
            if sorted(t["id"] for t in mine) != sorted(expect["authored"][uid]):
                mismatches.append(f"{uid} tweets differ")

            counts = client.get("/v1/notifications/unread-counts").json()
            kinds = ("follow", "like", "reply", "mention", "retweet")
            if {k: counts[k] for k in kinds} != {k: expect["unread"][uid][k] for k in kinds}:
                mismatches.append(f"{uid} unread {counts} != {dict(expect['unread'][uid])}")

    # then they all equal the plan
    assert mismatches == []


def test_seeded_hashtags_and_names_are_found(stack, seeded) -> None:
    from warble.domain.text import hashtags

    # given the plan's tweets and their tags, by the one rule
    tagged: dict[str, list[str]] = {}
    for tweet in seeded["plan"]["tweets"]:
        if tweet["retweet_of"] is None:
            for tag in hashtags(tweet["text"]):
                tagged.setdefault(tag, []).append(tweet["id"])
    assert tagged and seeded["tags"][0] in tagged  # the manifest names the most used first
    user = seeded["users"][0]
    with stack.client() as anonymous:
        token = anonymous.post(
            "/v1/auth/login", json={"login": user["username"], "password": seeded["password"]}
        ).json()["token"]
    with stack.client(token) as client:
        # when each tag's page is read, then it lists the tag's tweets, newest first
        for tag, ids in tagged.items():
            page = client.get(f"/v1/hashtags/{tag}/tweets", params={"limit": 100}).json()
            assert [t["id"] for t in page["items"]] == sorted(ids, key=int, reverse=True), tag
        # and a person is found by a word of the name the seed gave them
        other = seeded["users"][1]
        word = seeded["display_names"][1].split()[-1]
        found = client.get("/v1/search/users", params={"q": word, "limit": 100}).json()
        assert other["id"] in [u["id"] for u in found["items"]]


def test_the_streams_go_on_from_the_seeded_state(stack, seeded) -> None:
    # given a seeded user and another who does not follow them yet
    follows = {tuple(edge) for edge in seeded["plan"]["follows"]}
    ids = [u["id"] for u in seeded["users"]]
    followee = max(ids, key=lambda u: sum(1 for _, b in follows if b == u))
    follower = next(u for u in ids if u != followee and (u, followee) not in follows)
    name = next(u["username"] for u in seeded["users"] if u["id"] == follower)
    with stack.client() as anonymous:
        token = anonymous.post(
            "/v1/auth/login", json={"login": name, "password": seeded["password"]}
        ).json()["token"]
    before = sum(1 for _, b in follows if b == followee)

    # when they follow through the API
    with stack.client(token) as client:
        assert client.put(f"/v1/users/me/following/{followee}").status_code == 200

        # then the stream's counter adds one to the seeded count
        deadline = time.monotonic() + 10
        count = -1
        while time.monotonic() < deadline:
            count = client.get(f"/v1/users/{followee}").json()["followers_count"]
            if count == before + 1:
                break
            time.sleep(0.2)
    assert count == before + 1


def test_a_seed_run_talks_to_the_stack_it_is_given() -> None:
    # given no stack at the endpoint, when seeding, then it fails with the reason, not a trace
    command = [sys.executable, "-m", "infra.local", "seed", "--small", "--quiet",
               "--endpoint-url", "http://127.0.0.1:9"]  # fmt: skip
    ran = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert ran.returncode != 0
    assert "http://127.0.0.1:9" in ran.stderr
