"""The export (``GET /v1/users/me/export``) of an account of 10,000 tweets, through the real
ExportFunction handler, against the raw paged reads it needs, in the same run.

The account is made through AccountService and its tweets are written with raw
BatchWriteItem in exactly warble.dal.tweets' item shapes (the tweet and its index item), as
``make seed`` imports them. The headline baseline is the raw Query pages of the author's
tweets (``warble.domain.export.service.PAGE`` a call, newest first, consistent: what the export
reads), the breakdown adds the
raw BatchGetItem of their counters (what hydrating their counts reads). The rest of the export
(sessions, follows, blocks, mutes, conversations, notifications, media, location) is empty for
this account: one small read each. ``--quick`` scales the tweets with the run (0.1: 1,000).
"""

from __future__ import annotations

import base64
import gzip
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from bench import stack
from bench.harness import Benchmark, Run, group

TWEETS = 10_000


def tweet_texts() -> list[str]:
    """Real, varied English for the tweets (the answer's gzipped size depends on it): the
    sentences of this repository's docs, cut at 140 characters, in order."""
    words = " ".join(
        path.read_text(encoding="utf-8") for path in sorted((stack.ROOT / "docs").glob("*.md"))
    ).split()
    sentences, current = [], ""
    for word in words:
        if len(current) + len(word) + 1 > 140:
            sentences.append(current)
            current = ""
        current = f"{current} {word}".strip()
        if word.endswith((".", "!", "?")) and len(current) > 20:
            sentences.append(current)
            current = ""
    return sentences


def timed(call: Callable[[], bytes]) -> tuple[bytes, float]:
    started = time.perf_counter()
    made = call()
    return made, time.perf_counter() - started


@group("export", "GET /v1/users/me/export of a 10,000-tweet account vs its raw paged reads")
def export_group(run: Run) -> Iterator[Benchmark]:
    from warble import services
    from warble.dal.tweets import TweetIndexItem, TweetItem
    from warble.domain.export.service import PAGE
    from warble.ids import decompose

    from infra.local.seed import ImportWriter

    bench_stack = stack.shared(run)
    _, ddb = stack.raw_clients(run, bench_stack)
    services.reset()
    container = services.container()
    settings = container.settings
    tweets = max(100, round(TWEETS * min(1.0, run.scale)))
    issued = services.accounts().signup("bigexport", "big@example.com", "password1", None, "")
    user_id = int(issued.user["id"])
    writer = ImportWriter(bench_stack.moto_url, settings.aws_region)
    texts = tweet_texts()
    for i in range(tweets):
        tid = container.ids.next_id()
        text = texts[i % len(texts)]
        item = TweetItem(user_id, tid, text=text, created_at_ms=decompose(tid)[0])
        writer.put(settings.tweets_table, item.serialize())
        writer.put(
            settings.tweet_index_table, TweetIndexItem(f"T#{tid}", author_id=user_id).serialize()
        )
    writer.close()

    handler = stack.load_function("export").handler
    event = stack.event("export/export.json")
    event["headers"]["authorization"] = f"Bearer {issued.token}"
    # As a browser or an HTTP library asks: the answer is gzipped (warble.http.export).
    event["headers"]["accept-encoding"] = "gzip, deflate, br, zstd"
    plain = {**event, "headers": {**event["headers"], "accept-encoding": "identity"}}

    def export_through_handler() -> Any:
        answer = handler(event, stack.Context())
        assert answer["statusCode"] == 200, answer
        return answer

    ids: list[int] = []

    def raw_query_pages() -> int:
        found, start = 0, None
        ids.clear()
        while True:
            asked: dict[str, Any] = {
                "TableName": settings.tweets_table,
                "KeyConditionExpression": "author_id = :a",
                "ExpressionAttributeValues": {":a": {"N": str(user_id)}},
                "ScanIndexForward": False,
                "ConsistentRead": True,
                "Limit": PAGE,
            }
            if start is not None:
                asked["ExclusiveStartKey"] = start
            answer = ddb.query(**asked)
            found += len(answer["Items"])
            ids.extend(int(item["tweet_id"]["N"]) for item in answer["Items"])
            start = answer.get("LastEvaluatedKey")
            if start is None:
                return found

    def raw_query_pages_and_counters() -> int:
        found = raw_query_pages()
        for at in range(0, len(ids), 100):
            keys = [{"pk": {"S": f"T#{tid}"}} for tid in ids[at : at + 100]]
            ddb.batch_get_item(RequestItems={settings.counters_table: {"Keys": keys}})
        return found

    def describe() -> list[str]:
        packed = export_through_handler()
        assert packed["isBase64Encoded"] and packed["headers"]["Content-Encoding"] == "gzip"
        text = gzip.decompress(base64.b64decode(packed["body"]))
        document = json.loads(text)
        as_is = handler(plain, stack.Context())
        assert json.loads(as_is["body"]) == document, "the plain and gzipped answers differ"
        level9 = timed(lambda: gzip.compress(text, 9))
        level6 = timed(lambda: gzip.compress(text, 6))
        return [
            f"{len(document['tweets']):,} tweets exported: {len(text) / 1e6:.2f} MB of JSON,"
            f" {len(json.dumps(packed)) / 1e6:.2f} MB of Lambda answer gzipped"
            f" ({len(json.dumps(as_is)) / 1e6:.2f} MB plain; a Lambda answer may be 6.29 MB)",
            f"gzip of the document: level 6 {level6[1] * 1e3:.0f} ms,"
            f" {len(level6[0]) / 1e6:.2f} MB; level 9 {level9[1] * 1e3:.0f} ms,"
            f" {len(level9[0]) / 1e6:.2f} MB",
        ]

    yield Benchmark(
        f"GET /v1/users/me/export: {tweets:,} tweets",
        export_through_handler,
        raw_query_pages,
        baseline=f"raw Query pages of {PAGE:,} tweets",
        breakdown=[
            ("raw Query pages + BatchGetItem of their counters", raw_query_pages_and_counters)
        ],
        warmup=1,
        budget_s=60.0,
        min_iterations=3,
        rounds=3,
        describe=describe,
        throughput=False,
    )
