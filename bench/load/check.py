"""After a load run: the per-route table, and what the run wrote checked against the tables.

    python -m bench.load.check --csv bench/results/load --endpoint-url http://127.0.0.1:5005

- **No 5xx**: counted from Locust's failures over the whole run: the measured window's
  (``<csv>_failures.csv``) and the warm-up's before it (``<csv>_warmup_failures.csv``, written
  by the locustfile when it resets its statistics); 4xx are listed apart.
- **Nothing lost, nothing counted twice**: every write the load recorded (``LOAD_WRITES``) is
  read back from DynamoDB directly (boto3 against the stack's moto): each tweet and its id
  item, each like's edge, each follow's edge, each message. Then, once the streams have settled
  (re-checked until they agree or ``--settle`` seconds pass), every touched counter seen
  through the API equals a recount of the table: authors' ``tweet_count`` (their partition of
  the tweets table), liked tweets' ``like_count`` (their ``LU#`` items), followed users'
  ``followers_count`` (``IT#`` items) and followers' ``following_count`` (``OT#`` items). And
  the home timeline's first page of a sample of users (followers of the load's authors)
  equals the newest 20 tweets of them and everyone they follow, as the tables hold them.

Writes ``<csv>-report.md`` (the tables for docs/capacity.md) and exits 1 if a check fails.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import boto3
import httpx

ROOT = Path(__file__).resolve().parents[2]
# warble.dal.likes.LIKERS_SHARDS: this check reads the tables as the stack lays them out, with
# boto3 alone (it runs outside the stack's code).
LIKERS_SHARDS = 8


def route_table(csv_prefix: Path) -> tuple[list[dict[str, str]], dict[str, int]]:
    """Locust's per-route rows and the failures by status (``5xx``, ``4xx``, ``other``)."""
    with open(f"{csv_prefix}_stats.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    failures: dict[str, int] = defaultdict(int)
    path = Path(f"{csv_prefix}_failures.csv")
    if path.exists():
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                code = re.search(r"\b([1-5]\d\d)\b", row.get("Error", ""))
                kind = f"{code.group(1)[0]}xx" if code else "other"
                failures[kind] += int(row.get("Occurrences") or 0)
    return rows, dict(failures)


def whole_run(csv_prefix: Path) -> tuple[int, dict[str, int]]:
    """The warm-up's requests, and the failures by status of the warm-up and the window."""
    _, failures = route_table(csv_prefix)
    warmup = Path(f"{csv_prefix}_warmup")
    if not Path(f"{warmup}_stats.csv").exists():
        return 0, failures
    rows, before = route_table(warmup)
    requests = sum(int(r["Request Count"]) for r in rows if r["Name"] != "Aggregated")
    return requests, {k: failures.get(k, 0) + before.get(k, 0) for k in {*failures, *before}}


def markdown(rows: list[dict[str, str]]) -> str:
    lines = [
        "| type | route | requests | failures | req/s | p50 ms | p95 ms | p99 ms | max ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['Type']} | {row['Name']} | {row['Request Count']} | {row['Failure Count']}"
            f" | {float(row['Requests/s']):.2f} | {row['50%']} | {row['95%']} | {row['99%']}"
            f" | {float(row['Max Response Time']):.0f} |"
        )
    return "\n".join(lines)


class Tables:
    """Recounts straight from DynamoDB (the stack's moto)."""

    def __init__(self, env: dict[str, str], endpoint: str) -> None:
        self.env = env
        self.db = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")

    def _count(self, table: str, key: str, value: dict[str, str], prefix: str | None) -> int:
        expression = f"{key} = :k" + (" AND begins_with(sk, :p)" if prefix else "")
        values: dict[str, Any] = {":k": value}
        if prefix:
            values[":p"] = {"S": prefix}
        total, start = 0, None
        while True:
            extra = {"ExclusiveStartKey": start} if start else {}
            answer = self.db.query(TableName=self.env[table], KeyConditionExpression=expression,
                                   ExpressionAttributeValues=values, Select="COUNT",
                                   ConsistentRead=True, **extra)  # fmt: skip
            total += answer["Count"]
            start = answer.get("LastEvaluatedKey")
            if not start:
                return total

    def tweets_of(self, author: str) -> int:
        return self._count("TWEETS_TABLE", "author_id", {"N": author}, None)

    def likes_of(self, tweet: str) -> int:
        """The tweet's ``LU#`` items in each of its likers partitions (warble.dal.likes:
        ``T#<tweet>#<k>`` for its eight shards, and ``T#<tweet>`` for likes stored before them)."""
        partitions = [f"T#{tweet}#{k}" for k in range(LIKERS_SHARDS)] + [f"T#{tweet}"]
        return sum(self._count("LIKES_TABLE", "pk", {"S": p}, "LU#") for p in partitions)

    def followers_of(self, user: str) -> int:
        """The user's ``IT#`` items in each of its followers shards (warble.dal.graph:
        ``U#<user>`` and ``U#<user>#<k>`` below its META's ``follower_shards``)."""
        meta = self.db.get_item(TableName=self.env["GRAPH_TABLE"], ConsistentRead=True,
                                Key={"pk": {"S": f"U#{user}"}, "sk": {"S": "META"}})  # fmt: skip
        shards = int(meta.get("Item", {}).get("follower_shards", {}).get("N", "1"))
        partitions = [f"U#{user}"] + [f"U#{user}#{k}" for k in range(1, shards)]
        return sum(self._count("GRAPH_TABLE", "pk", {"S": p}, "IT#") for p in partitions)

    def following_of(self, user: str) -> int:
        return self._count("GRAPH_TABLE", "pk", {"S": f"U#{user}"}, "OT#")

    def exists(self, table: str, key: dict[str, Any]) -> bool:
        return "Item" in self.db.get_item(TableName=self.env[table], Key=key, ConsistentRead=True)

    def subject(self, tweet: str) -> str:
        """The tweet a like of ``tweet`` lands on: its original when it is a retweet."""
        index = self.db.get_item(
            TableName=self.env["TWEET_INDEX_TABLE"], Key={"pk": {"S": f"T#{tweet}"}}
        ).get("Item")
        if not index:
            return tweet
        item = (
            self.db.get_item(
                TableName=self.env["TWEETS_TABLE"],
                Key={"author_id": index["author_id"], "tweet_id": {"N": tweet}},
                ProjectionExpression="retweet_of",
            ).get("Item")
            or {}
        )
        return str(item["retweet_of"]["N"]) if "retweet_of" in item else tweet

    def followees(self, user: str) -> list[str]:
        items, start = [], None
        while True:
            extra = {"ExclusiveStartKey": start} if start else {}
            answer = self.db.query(
                TableName=self.env["GRAPH_TABLE"],
                KeyConditionExpression="pk = :k AND begins_with(sk, :p)",
                ExpressionAttributeValues={":k": {"S": f"U#{user}"}, ":p": {"S": "O#"}},
                ConsistentRead=True, **extra,
            )  # fmt: skip
            items += [item["uid"]["N"] for item in answer["Items"]]
            start = answer.get("LastEvaluatedKey")
            if not start:
                return items

    def followers(self, user: str, limit: int) -> list[str]:
        answer = self.db.query(
            TableName=self.env["GRAPH_TABLE"],
            KeyConditionExpression="pk = :k AND begins_with(sk, :p)",
            ExpressionAttributeValues={":k": {"S": f"U#{user}"}, ":p": {"S": "I#"}},
            Limit=limit,
        )
        return [item["uid"]["N"] for item in answer["Items"]]

    def newest_tweets(self, author: str, limit: int) -> list[str]:
        answer = self.db.query(
            TableName=self.env["TWEETS_TABLE"], KeyConditionExpression="author_id = :a",
            ExpressionAttributeValues={":a": {"N": author}}, ScanIndexForward=False,
            Limit=limit, ConsistentRead=True,
        )  # fmt: skip
        return [item["tweet_id"]["N"] for item in answer["Items"]]


def check_writes(
    writes: list[dict[str, Any]], tables: Tables, api: httpx.Client, settle: float, sample: int
) -> dict[str, Any]:
    """Every check's failures (empty lists: nothing lost, nothing counted twice)."""
    lost: list[str] = []
    for w in writes:
        if w["kind"] == "tweet":
            if not tables.exists("TWEET_INDEX_TABLE", {"pk": {"S": f"T#{w['id']}"}}):
                lost.append(f"tweet {w['id']}")
        elif w["kind"] == "like":
            # Liking a retweet likes its original (as the API renders a retweet's counts).
            key = {"pk": {"S": f"U#{w['user']}"}, "sk": {"S": f"T#{tables.subject(w['tweet'])}"}}
            if not tables.exists("LIKES_TABLE", key):
                lost.append(f"like {w['user']} -> {w['tweet']}")
        elif w["kind"] == "follow":
            # warble.dal.graph's "does A follow B?" item (ids zero-padded to 19 digits).
            key = {"pk": {"S": f"U#{w['user']}"}, "sk": {"S": f"O#{int(w['other']):019d}"}}
            if not tables.exists("GRAPH_TABLE", key):
                lost.append(f"follow {w['user']} -> {w['other']}")
        elif w["kind"] == "message":
            key = {"conversation_id": {"N": w["conversation"]}, "message_id": {"N": w["id"]}}
            if not tables.exists("MESSAGES_TABLE", key):
                lost.append(f"message {w['id']}")

    authors = {w["author"] for w in writes if w["kind"] == "tweet"}
    liked = {w["tweet"] for w in writes if w["kind"] == "like"}
    followed = {w["other"] for w in writes if w["kind"] == "follow"}
    followers = {w["user"] for w in writes if w["kind"] == "follow"}
    readers: list[str] = []
    for author in sorted(authors)[:sample]:
        readers += tables.followers(author, 3)
    readers = sorted(set(readers))[:sample]

    def counters() -> list[str]:
        wrong = []
        for user in authors | followed | followers:
            body = api.get(f"/v1/users/{user}").json()
            want = {}
            if user in authors:
                want["tweet_count"] = tables.tweets_of(user)
            if user in followed:
                want["followers_count"] = tables.followers_of(user)
            if user in followers:
                want["following_count"] = tables.following_of(user)
            got = {k: body.get(k) for k in want}
            if got != want:
                wrong.append(f"user {user}: API {got} != tables {want}")
        for tweet in liked:
            body = api.get(f"/v1/tweets/{tweet}").json()
            subject = body["retweet_of"]["id"] if body.get("retweet_of") else tweet
            want_likes = tables.likes_of(subject)
            if body.get("like_count") != want_likes:
                got_likes = body.get("like_count")
                wrong.append(f"tweet {tweet}: API like_count {got_likes} != tables {want_likes}")
        return wrong

    names = {u["id"]: u["username"] for u in _population()["users"]}
    readers = [r for r in readers if r in names]
    tokens = {}
    for reader in readers:
        login = {"login": names[reader], "password": _population()["password"]}
        tokens[reader] = api.post("/v1/auth/login", json=login).json()["token"]

    def timelines() -> list[str]:
        wrong = []
        for reader in readers:
            authors_of = [reader, *tables.followees(reader)]
            every = {t for a in authors_of for t in tables.newest_tweets(a, 20)}
            newest = sorted(every, key=int, reverse=True)[:20]
            headers = {"Authorization": f"Bearer {tokens[reader]}"}
            home = api.get("/v1/timeline/home?limit=20", headers=headers).json()["items"]
            if [t["id"] for t in home] != newest:
                wrong.append(f"home of {reader} differs from its followees' newest tweets")
        return wrong

    deadline = time.monotonic() + settle
    while True:
        wrong_counters, wrong_homes = counters(), timelines()
        if not (wrong_counters or wrong_homes) or time.monotonic() > deadline:
            break
        time.sleep(2)
    return {
        "writes": {
            kind: sum(1 for w in writes if w["kind"] == kind)
            for kind in ("tweet", "like", "follow", "message")
        },
        "lost": lost,
        "counters_checked": len(authors | followed | followers) + len(liked),
        "counters_wrong": wrong_counters,
        "timelines_checked": len(readers),
        "timelines_wrong": wrong_homes,
    }


_doc: dict[str, Any] | None = None


def _population() -> dict[str, Any]:
    global _doc
    if _doc is None:
        path = os.environ.get("LOAD_MANIFEST", ROOT / "bench/results/population.json")
        _doc = json.loads(Path(path).read_text())
    return _doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load.check", description=__doc__)
    parser.add_argument("--csv", type=Path, default=ROOT / "bench/results/load")
    parser.add_argument("--writes", type=Path, default=ROOT / "bench/results/load-writes.jsonl")
    parser.add_argument("--http", default="http://127.0.0.1:3000")
    parser.add_argument("--endpoint-url", default="http://127.0.0.1:5005")
    parser.add_argument("--env-vars", default=None)
    parser.add_argument("--stack-name", default="warble-local")
    parser.add_argument("--settle", type=float, default=60.0, help="seconds for the streams")
    parser.add_argument("--sample", type=int, default=30, help="authors and readers checked")
    args = parser.parse_args(argv)

    from infra.local.stack_environment import stack_environment

    env = stack_environment(argparse.Namespace(
        template="template.yaml", stack_name=args.stack_name, region="us-east-1",
        env_vars=args.env_vars, endpoint_url=args.endpoint_url,
    ))  # fmt: skip
    os.environ.update(env)  # the stack's table names and moto's dummy credentials
    rows, _ = route_table(args.csv)
    warmup_requests, failures = whole_run(args.csv)
    writes = [json.loads(line) for line in args.writes.read_text().splitlines() if line]
    someone = random.Random(0).choice(_population()["users"])
    with httpx.Client(base_url=args.http, timeout=60) as api:
        login = {"login": someone["username"], "password": _population()["password"]}
        token = api.post("/v1/auth/login", json=login)
        api.headers["Authorization"] = f"Bearer {token.json()['token']}"
        result = check_writes(writes, Tables(env, args.endpoint_url), api, args.settle, args.sample)
    result["failures_by_status"] = failures
    ok = not (failures.get("5xx") or result["lost"] or result["counters_wrong"]
              or result["timelines_wrong"])  # fmt: skip
    report = [
        "### Per route", "", markdown(rows), "",
        "### After the run", "",
        f"- warm-up before the window above: {warmup_requests} requests",
        f"- failures by status, whole run: {failures or 'none'} (5xx: {failures.get('5xx', 0)})",
        f"- writes recorded: {result['writes']}; missing from the tables: {len(result['lost'])}",
        f"- counters checked against table recounts: {result['counters_checked']}, "
        f"wrong: {len(result['counters_wrong'])}",
        f"- home timelines checked against the tables: {result['timelines_checked']}, "
        f"wrong: {len(result['timelines_wrong'])}",
        f"- verdict: {'PASS' if ok else 'FAIL'}",
    ]  # fmt: skip
    for problem in result["lost"] + result["counters_wrong"] + result["timelines_wrong"]:
        report.append(f"  - {problem}")
    out = Path(f"{args.csv}-report.md")
    out.write_text("\n".join(report) + "\n")
    print("\n".join(report))
    (Path(f"{args.csv}-check.json")).write_text(json.dumps(result, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
