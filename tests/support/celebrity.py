"""A big account, written straight into the tables (BatchWriteItem, Redis pipelines) in the
stores' own item designs, and the functions that delete it run as the local runtime runs them:
the two stream readers and AccountDeletionFunction in Lambda workers, fed by the local stream
and SQS pollers. For the deletion test at 20,000 followers and bench/account_deletion.py at
100,000 (signing that many follows up through the API would take hours).
"""

from __future__ import annotations

import dataclasses
import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import boto3
from warble import keys

from infra.local.lambdas import LambdaRuntime
from infra.local.queue_pollers import QueuePollers, queue_mappings
from infra.local.stream_mappings import stream_mappings
from infra.local.stream_pollers import StreamPollers
from infra.local.template import ResolveContext, Template, load_template
from tests.conftest import ROOT


def _id(value: int) -> str:
    return f"{value:019d}"


@dataclass
class Celebrity:
    user_id: int
    followers: list[int]
    tweets: list[int]
    likers: list[int] = field(default_factory=list)  # followers who liked its newest tweet
    homes: list[int] = field(default_factory=list)  # followers whose home timeline is built


def seed(
    user_id: int,
    followers: int,
    tweets: int,
    *,
    likes: int = 200,
    homes: int = 500,
    redis: Any,
    first_id: int = 10**17,
) -> Celebrity:
    """``followers`` follows of ``user_id`` (each with the follower's META, as a follow writes
    it), ``tweets`` tweets with their index items, ``likes`` likes of the newest tweet by
    followers, the counters the streams would have made, and ``homes`` followers' home
    timelines holding its newest 50 tweets. Ids are Snowflake-sized and unique per ``first_id``."""
    s = _settings()
    ids = iter(range(first_id, first_id + 10 * (followers + tweets) + 10))
    who = [next(ids) for _ in range(followers)]
    posted = sorted(next(ids) for _ in range(tweets))
    dynamodb = boto3.resource("dynamodb")
    graph = dynamodb.Table(s.graph_table)
    with graph.batch_writer() as batch:
        for follower in who:
            seq = next(ids)
            me, them = f"U#{user_id}", f"U#{follower}"
            batch.put_item(Item={"pk": me, "sk": f"I#{_id(follower)}", "uid": follower, "seq": seq})
            batch.put_item(Item={"pk": me, "sk": f"IT#{_id(seq)}", "uid": follower})
            batch.put_item(Item={"pk": them, "sk": f"O#{_id(user_id)}", "uid": user_id, "seq": seq})
            batch.put_item(Item={"pk": them, "sk": f"OT#{_id(seq)}", "uid": user_id})
            batch.put_item(Item={"pk": them, "sk": "META", "following_count": 1})
    with dynamodb.Table(s.tweets_table).batch_writer() as batch:
        for number, tweet in enumerate(posted):
            batch.put_item(Item={"author_id": user_id, "tweet_id": tweet,
                                 "text": f"tweet {number}", "created_at_ms": 0})  # fmt: skip
    with dynamodb.Table(s.tweet_index_table).batch_writer() as batch:
        for tweet in posted:
            batch.put_item(Item={"pk": f"T#{tweet}", "author_id": user_id})
    newest = posted[-1]
    likers = who[:likes]
    with dynamodb.Table(s.likes_table).batch_writer() as batch:
        for liker in likers:
            seq = next(ids)
            batch.put_item(Item={"pk": f"U#{liker}", "sk": f"T#{newest}", "seq": seq,
                                 "author_id": user_id})  # fmt: skip
            batch.put_item(Item={"pk": f"U#{liker}", "sk": f"LT#{_id(seq)}", "tid": newest,
                                 "author_id": user_id})  # fmt: skip
            batch.put_item(Item={"pk": f"T#{newest}", "sk": f"LU#{_id(seq)}", "uid": liker})
    with dynamodb.Table(s.counters_table).batch_writer() as batch:
        batch.put_item(Item={"pk": f"U#{user_id}", "followers_count": followers,
                             "tweet_count": tweets})  # fmt: skip
        batch.put_item(Item={"pk": f"T#{newest}", "like_count": len(likers)})
    built = random.Random(user_id).sample(who, min(homes, len(who)))
    pipe = redis.pipeline(transaction=False)
    for follower in built:
        home = keys.home_timeline(follower)
        pipe.zadd(home, {"0": 0, **{f"{t:019d}:{user_id}": 0 for t in posted[-50:]}})
    pipe.execute()
    return Celebrity(user_id, who, posted, likers, built)


def _settings() -> Any:
    from warble.settings import get_settings

    return get_settings()


@contextmanager
def deletion_workers(
    moto_url: str, values: dict[str, Any], db_name: str, stack_name: str = "warble-test"
) -> Iterator[Workers]:
    """The two stream readers and AccountDeletionFunction, each in Lambda workers fed by the
    local pollers from now on (what was seeded before is not a stream event to them), on the
    stores of this process's environment (``values``: what provisioning made of the template's
    resources)."""
    template = load_template(ROOT / "template.yaml")
    context = ResolveContext(stack_name=stack_name, values=values)
    workers = Workers(template, context, moto_url, db_name)
    try:
        workers.start_streams()
        workers.start_deletion()
        yield workers
    finally:
        workers.stop()


class Workers:
    def __init__(
        self, template: Template, context: ResolveContext, moto_url: str, db_name: str
    ) -> None:
        self.template, self.context = template, context
        self.moto_url, self.db_name = moto_url, db_name
        self._streams: tuple[LambdaRuntime, StreamPollers] | None = None
        self._deletion: tuple[LambdaRuntime, QueuePollers] | None = None

    def _runtime(self) -> LambdaRuntime:
        overrides = {
            "Parameters": {
                "DB_NAME": self.db_name,
                "DB_SSLMODE": "disable",
                "REDIS_URL": os.environ["REDIS_URL"],
                "REDIS_CLUSTER": os.environ["REDIS_CLUSTER"],
                "CELEBRITY_FOLLOWERS": "10000",
            }
        }
        return LambdaRuntime(
            self.template,
            self.context,
            env_overrides=overrides,
            extra_env={
                "AWS_ENDPOINT_URL": self.moto_url,
                "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing",
            },
            log_line=lambda _function, _line: None,
        )

    def start_streams(self) -> None:
        runtime = self._runtime()
        readers = ("FanoutConsumerFunction", "ReactionsConsumerFunction")
        mappings = [
            dataclasses.replace(m, starting_position="LATEST")
            for m in stream_mappings(self.template, self.context)
            if m.function_name in readers
        ]
        pollers = StreamPollers(self.template, runtime, self.moto_url, self.context,
                                mappings=mappings)  # fmt: skip
        pollers.start()
        self._streams = (runtime, pollers)

    def start_deletion(self) -> None:
        runtime = self._runtime()
        mappings = [
            m for m in queue_mappings(self.template, self.context)
            if m.function_name == "AccountDeletionFunction"
        ]  # fmt: skip
        pollers = QueuePollers(self.template, runtime, self.moto_url, self.context, mappings)
        pollers.start()
        self._deletion = (runtime, pollers)

    def kill_deletion(self) -> None:
        """The deletion function's workers killed mid-slice, and its poller with them: the
        messages it had received come back after the queue's visibility timeout."""
        if self._deletion is not None:
            runtime, pollers = self._deletion
            runtime.close()
            pollers.stop()
            self._deletion = None

    def stop(self) -> None:
        self.kill_deletion()
        if self._streams is not None:
            runtime, pollers = self._streams
            pollers.stop()
            runtime.close()
            self._streams = None
