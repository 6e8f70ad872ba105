"""The population generator: a realistic social network in the running local stack.

    python -m infra.local seed                      # 20,000 users, 200,000 follows, ...
    python -m infra.local seed --small --seed 7     # the test's population (seconds)

Users with a power-law follower distribution (each follows a lognormal number of accounts,
"most follow tens", capped at the follow limit; whom they follow is drawn by a Zipf popularity,
so a few accounts pass ``CELEBRITY_FOLLOWERS``), tweets, replies, retweets, likes and mentions,
conversations between friends, and located users for Discover.

**How it stays exact while writing in bulk.** It does what DynamoDB's import from S3 plus a
backfill job would do on AWS: the source items (graph edges and lists, tweets and their index
items, likes) AND the durable items the streams would have derived from them (followers, tweet,
like, retweet and reply counters; follow, like, reply, mention and retweet notifications with
their dedupe items; each follower's ``following_count``) are written with BatchWriteItem
through the local moto server's import mode (``infra/local/moto_patches.py``: no stream
records, as an imported table has none). The derived values come from the domain's own rules:
``Container.counter_rules`` and ``warble.services.notifications.producers()``, fed the same typed
events the stream decoders make. Redis state (home timelines, following sets, recent likes, unread
sets) is not written: each is rebuilt from the tables on its first read, by the code that
rebuilds it after a flush or an expiry. Users go to PostgreSQL with one COPY (one shared bcrypt
hash, password ``password1``); conversations and messages go through ``ConversationService``
and locations through ``DiscoverService.place_many`` (they have no stream).

What differs from the same history made through the API in a few minutes: no notification is
dropped by the hot-recipient cap (600 a minute), as if the history had been spread over time;
ids and times are those of the seeding run.

Re-runnable: every run mints new ids and names (``s<run>_<n>``, the run tag from the first id),
so a second run adds a second population, unconnected to the first. The run writes a manifest
(JSON: the users, and the whole plan for small populations) for the load test and the tests.
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import random
import resource
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from infra.local.seed_nearby import _base36, around
from infra.local.stack_environment import stack_environment

if TYPE_CHECKING:
    from warble.services import Container

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "password1"
IMPORT_HEADER = "X-Warble-Local-Import"
BATCH_WRITE = 25  # items per BatchWriteItem (DynamoDB's limit)
FULL_PLAN_FOLLOWS = 50_000  # manifests of populations up to this size carry the whole plan
WORDS = (
    "morning", "coffee", "build", "ship", "deploy", "weekend", "music", "river", "city",
    "train", "lunch", "idea", "review", "garden", "storm", "launch", "paper", "design", "bug",
    "fix", "release", "coast", "mountain", "book", "movie", "team", "rain", "sunny", "quiet",
    "loud", "new", "old", "fast", "slow", "hello", "thanks", "great", "today", "tomorrow",
)  # fmt: skip
# Display names (people search): first and last names of several languages, accents included.
FIRST_NAMES = (
    "José", "María", "Ana", "Jean", "Chloé", "Zoë", "Björn", "Søren", "François", "Ángel",
    "Noah", "Emma", "Olivia", "Liam", "Lucas", "Léa", "Wei", "Li", "Kenji", "Yuki", "Priya",
    "Arjun", "Fatima", "Omar", "Ingrid", "Pedro", "Camila", "Mateo", "Inès", "Łukasz",
)  # fmt: skip
LAST_NAMES = (
    "Núñez", "García", "Martínez", "Smith", "Müller", "Dubois", "Lefèvre", "Rossi", "Kowalski",
    "Tanaka", "Kim", "Chen", "Singh", "Öztürk", "Andersson", "Hansen", "Novák", "Silva",
    "Santos", "López", "Pérez", "Brown", "Taylor", "Martin", "Bernard", "Dvořák", "Yılmaz",  # noqa: RUF001  (Turkish dotless i)
)  # fmt: skip
# Hashtags: a vocabulary drawn Zipf-like (exponent 1.1), so a few tags are everywhere and most
# are used once or twice, as on any social network; about a third of tweets carry 1 to 3.
TAG_SHARE = 0.35
TAG_EXPONENT = 1.1
CITIES = (  # Discover: located users around a few cities (lat, lon)
    (48.8566, 2.3522),
    (51.5074, -0.1278),
    (40.7128, -74.0060),
    (35.6762, 139.6503),
    (-23.5505, -46.6333),
)


# --------------------------------------------------------------------------------------------
# The plan: who follows, posts, likes and talks to whom (pure: sizes and a seed in, indexes out)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    # Defaults sized for ~10 minutes on a shared 2-core machine, where the local moto server
    # takes ~2,000 items a second (about a million items here, notifications included).
    users: int = 20_000
    follows: int = 100_000
    tweets: int = 40_000
    likes: int = 60_000
    conversations: int = 100
    celebrities: int = 3  # accounts followed past CELEBRITY_FOLLOWERS, when the users allow
    located: float = 0.1  # share of users with a location
    reply_share: float = 0.15
    retweet_share: float = 0.10
    mention_share: float = 0.10

    @classmethod
    def small(cls) -> Sizes:
        return cls(users=30, follows=240, tweets=100, likes=150, conversations=4, celebrities=2)


@dataclass(frozen=True)
class PlannedTweet:
    author: int  # user index
    text: str
    reply_to: int | None = None  # tweet index
    retweet_of: int | None = None  # tweet index


@dataclass
class Plan:
    users: int
    follows: list[tuple[int, int]]  # (follower, followee) indexes, in follow order
    tweets: list[PlannedTweet]  # in posting order: a target precedes its replies and retweets
    likes: list[tuple[int, int]]  # (user index, tweet index)
    conversations: list[tuple[int, int, int]]  # (a, b, messages): a and b are friends
    located: list[tuple[int, float, float]]  # (user index, lat, lon)


def _out_degrees(sizes: Sizes, limit: int, rng: random.Random) -> list[int]:
    """How many accounts each user follows: lognormal ("most follow tens", a long tail),
    scaled to the wanted total, at least 1, capped at the follow limit."""
    raw = [rng.lognormvariate(0.0, 1.2) for _ in range(sizes.users)]
    cap = min(limit, sizes.users - 1)
    scale = sizes.follows / max(sum(raw), 1e-9)
    for _ in range(8):  # rounding and the cap move the total: rescale until it is near
        degrees = [max(1, min(cap, round(r * scale))) for r in raw]
        scale *= sizes.follows / max(sum(degrees), 1)
    return degrees


def _weighted_sample(
    k: int, cumulative: list[float], exclude: int, rng: random.Random
) -> list[int]:
    """``k`` distinct indexes drawn by weight (cumulative weights), never ``exclude``."""
    chosen: dict[int, None] = {}
    n = len(cumulative)
    while len(chosen) < k:
        want = k - len(chosen)
        for pick in rng.choices(range(n), cum_weights=cumulative, k=want + want // 4 + 2):
            if pick != exclude and pick not in chosen:
                chosen[pick] = None
                if len(chosen) == k:
                    break
    return list(chosen)


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _tag_vocabulary(rng: random.Random) -> tuple[list[str], list[float]]:
    """Tags (two words run together: ``#coffeemorning``) in a random order, with the
    cumulative Zipf weights of their ranks."""
    tags = [a + b for a in WORDS for b in WORDS if a != b]
    rng.shuffle(tags)
    return tags, list(_accumulate(1.0 / (rank + 1) ** TAG_EXPONENT for rank in range(len(tags))))


def _tagged(text: str, vocabulary: tuple[list[str], list[float]], rng: random.Random) -> str:
    """The text with 1 to 3 hashtags from the long tail appended, a third of the time."""
    if rng.random() >= TAG_SHARE:
        return text
    tags, cumulative = vocabulary
    chosen = dict.fromkeys(rng.choices(tags, cum_weights=cumulative, k=rng.randint(1, 3)))
    # Some written capitalised: the tag is the same (API.md: matched ignoring case).
    return text + "".join(f" #{t.capitalize() if rng.random() < 0.2 else t}" for t in chosen)


def plan_population(
    sizes: Sizes, follow_limit: int, seed: int, celebrity_followers: int | None = None
) -> Plan:
    """The population's shape, as user and tweet indexes (ids are minted when written).

    With ``celebrity_followers`` (the stack's threshold) below the number of users, the
    ``sizes.celebrities`` most popular accounts are each followed by more than it: a realistic
    Zipf head puts the top account near a third of the users, so a population of tens of
    thousands would have no account above a threshold of 10,000 otherwise.
    """
    rng = random.Random(seed)
    n = sizes.users
    # Popularity: Zipf over a random order of the users (exponent 1: Twitter-like in-degrees).
    order = list(range(n))
    rng.shuffle(order)
    popularity = [0.0] * n
    for rank, user in enumerate(order):
        popularity[user] = 1.0 / (rank + 1)
    follows = _plan_follows(sizes, follow_limit, celebrity_followers, order, popularity, rng)
    activity = list(_accumulate(rng.lognormvariate(0.0, 1.0) for _ in range(n)))  # who posts
    tweets, targets = _plan_tweets(sizes, follows, activity, rng)
    likes = _plan_likes(sizes, tweets, targets, popularity, activity, rng)

    # Conversations between friends (they follow each other), a few messages each.
    edges = set(follows)
    friends = sorted({(min(a, b), max(a, b)) for a, b in follows if (b, a) in edges})
    rng.shuffle(friends)
    conversations = [(a, b, rng.randint(1, 5)) for a, b in friends[: sizes.conversations]]

    located = []
    for user in rng.sample(range(n), round(n * sizes.located)):
        lat, lon = rng.choice(CITIES)
        located.append((user, *around(lat, lon, 20.0, rng)))
    return Plan(n, follows, tweets, likes, conversations, located)


def _plan_follows(
    sizes: Sizes,
    follow_limit: int,
    celebrity_followers: int | None,
    order: list[int],
    popularity: list[float],
    rng: random.Random,
) -> list[tuple[int, int]]:
    """(follower, followee) pairs: lognormal out-degrees, Zipf-chosen followees, and the
    forced celebrities' fans."""
    n = sizes.users
    cumulative = list(_accumulate(popularity))
    degrees = _out_degrees(sizes, follow_limit, rng)
    head: dict[int, set[int]] = defaultdict(set)  # follower -> the celebrities it follows
    if celebrity_followers is not None and celebrity_followers + 1 < n:
        for celebrity in order[: sizes.celebrities]:
            extra = rng.randint(0, (n - 2 - celebrity_followers) // 4)
            others = [u for u in range(n) if u != celebrity]
            for fan in rng.sample(others, celebrity_followers + 1 + extra):
                head[fan].add(celebrity)
    follows: list[tuple[int, int]] = []
    for user, degree in enumerate(degrees):
        want = max(degree, len(head.get(user, ())))
        chosen = set(head.get(user, ()))
        while len(chosen) < want:  # a draw may repeat a celebrity held already
            chosen.update(_weighted_sample(want - len(chosen), cumulative, user, rng))
        follows.extend((user, followee) for followee in sorted(chosen))
    rng.shuffle(follows)  # follows happen in no particular order
    return follows


def _plan_tweets(
    sizes: Sizes, follows: list[tuple[int, int]], activity: list[float], rng: random.Random
) -> tuple[list[PlannedTweet], list[int]]:
    """Tweets in posting order (replies and retweets after their targets), and the indexes of
    those that can be replied to, retweeted and liked (not retweets)."""
    following: dict[int, list[int]] = defaultdict(list)
    for a, b in follows:
        following[a].append(b)
    users = range(sizes.users)
    tweets: list[PlannedTweet] = []
    targets: list[int] = []
    retweeted: set[tuple[int, int]] = set()
    vocabulary = _tag_vocabulary(rng)
    for _ in range(sizes.tweets):
        author = rng.choices(users, cum_weights=activity)[0]
        roll = rng.random()
        if targets and roll < sizes.reply_share:
            parent = rng.choice(targets)
            text = _tagged(_text(rng, rng.randint(3, 14)), vocabulary, rng)
            tweets.append(PlannedTweet(author, text, reply_to=parent))
            targets.append(len(tweets) - 1)
        elif targets and roll < sizes.reply_share + sizes.retweet_share:
            original = rng.choice(targets)
            if tweets[original].author != author and (author, original) not in retweeted:
                retweeted.add((author, original))
                tweets.append(PlannedTweet(author, "", retweet_of=original))
                continue
            tweets.append(
                PlannedTweet(author, _tagged(_text(rng, rng.randint(3, 14)), vocabulary, rng))
            )
            targets.append(len(tweets) - 1)
        else:
            text = _tagged(_text(rng, rng.randint(3, 14)), vocabulary, rng)
            if following[author] and rng.random() < sizes.mention_share:
                text = f"@{{user:{rng.choice(following[author])}}} {text}"
            tweets.append(PlannedTweet(author, text))
            targets.append(len(tweets) - 1)
    return tweets, targets


def _plan_likes(
    sizes: Sizes,
    tweets: list[PlannedTweet],
    targets: list[int],
    popularity: list[float],
    activity: list[float],
    rng: random.Random,
) -> list[tuple[int, int]]:
    """Distinct (user, tweet) likes: a user (by activity) likes a tweet of an author picked by
    popularity."""
    by_author: dict[int, list[int]] = defaultdict(list)
    for index in targets:
        by_author[tweets[index].author].append(index)
    authors = list(by_author)
    author_cum = list(_accumulate(popularity[a] for a in authors))
    users = range(sizes.users)
    liked: dict[tuple[int, int], None] = {}
    wanted = min(sizes.likes, sizes.users * len(targets))
    attempts = 0
    while len(liked) < wanted and attempts < wanted * 4:
        attempts += 1
        user = rng.choices(users, cum_weights=activity)[0]
        author = rng.choices(authors, cum_weights=author_cum)[0]
        liked.setdefault((user, rng.choice(by_author[author])), None)
    return list(liked)


def _accumulate(values: Iterable[float]) -> Iterator[float]:
    total = 0.0
    for value in values:
        total += value
        yield total


# --------------------------------------------------------------------------------------------
# Writing: ids, items, bulk writes
# --------------------------------------------------------------------------------------------


class ImportWriter:
    """BatchWriteItem in import mode (no stream records), 25 items a call, a few calls at a
    time; unprocessed items are sent again."""

    def __init__(self, endpoint_url: str, region: str, threads: int = 3) -> None:
        import boto3
        from botocore.config import Config

        self._client = boto3.client(
            "dynamodb",
            endpoint_url=endpoint_url,
            region_name=region,
            # Our own items, built by the stores' models: validating each request costs more
            # CPU than moto's write of it.
            config=Config(parameter_validation=False, max_pool_connections=threads),
        )
        self._client.meta.events.register("before-sign.dynamodb.BatchWriteItem", self._mark_import)
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="seed-write")
        self._pending: list[tuple[str, dict[str, Any]]] = []
        self._futures: list[Future[None]] = []
        self.written = 0
        self._lock = threading.Lock()

    @staticmethod
    def _mark_import(request: Any, **_: Any) -> None:
        request.headers[IMPORT_HEADER] = "1"

    def put(self, table: str, item: dict[str, Any]) -> None:
        self._pending.append((table, item))
        if len(self._pending) == BATCH_WRITE:
            self._send()

    def _send(self) -> None:
        batch, self._pending = self._pending, []
        self._futures.append(self._pool.submit(self._write, batch))
        if len(self._futures) > 64:  # bounded memory: wait for the oldest
            done, self._futures = self._futures[:32], self._futures[32:]
            for future in done:
                future.result()

    def _write(self, batch: list[tuple[str, dict[str, Any]]]) -> None:
        request: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for table, item in batch:
            request[table].append({"PutRequest": {"Item": item}})
        for attempt in range(8):
            answer = self._client.batch_write_item(RequestItems=dict(request))
            request = answer.get("UnprocessedItems") or {}
            if not request:
                break
            time.sleep(0.05 * 2**attempt)
        else:
            raise RuntimeError("items left unprocessed after 8 attempts")
        with self._lock:
            self.written += len(batch)

    def flush(self) -> None:
        if self._pending:
            self._send()
        for future in self._futures:
            future.result()
        self._futures = []

    def close(self) -> None:
        self.flush()
        self._pool.shutdown()


@dataclass
class Written:
    """What a run wrote, with ids (the manifest)."""

    run: str
    user_ids: list[int]
    usernames: list[str]
    tweet_ids: list[int] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    celebrities: list[int] = field(default_factory=list)
    conversation_ids: list[int] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)  # the most used hashtags, most used first


class Progress:
    """One rich progress bar per phase (plain lines when not on a terminal)."""

    def __init__(self, enabled: bool) -> None:
        from rich import progress as bars
        from rich.console import Console

        self.console = Console(stderr=True)
        self._bars = bars.Progress(
            bars.TextColumn("{task.description:<14}"), bars.BarColumn(),
            bars.MofNCompleteColumn(), bars.TimeElapsedColumn(), bars.TimeRemainingColumn(),
            console=self.console, disable=not enabled,
        )  # fmt: skip
        self.timings: dict[str, float] = {}

    def __enter__(self) -> Progress:
        self._bars.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bars.__exit__(*exc)  # type: ignore[arg-type]

    def phase(self, name: str, total: int) -> Callable[[int], None]:
        task = self._bars.add_task(name, total=total)
        started = time.monotonic()

        def advance(n: int = 1) -> None:
            self._bars.advance(task, n)
            self.timings[name] = time.monotonic() - started

        self.timings[name] = 0.0
        return advance


def _names(run: str, count: int) -> list[str]:
    # 15 characters at most: "s" + run (<= 6) + "_" + index in base 36 (<= 7).
    return [f"s{run}_{_base36(i)}" for i in range(count)]


def _display_name(index: int) -> str:
    """A person's name: every first name with every last name before any repeats."""
    first = FIRST_NAMES[index % len(FIRST_NAMES)]
    last = LAST_NAMES[(index // len(FIRST_NAMES)) % len(LAST_NAMES)]
    return f"{first} {last}"


def _mentions(text: str, names: list[str]) -> str:
    """``@{user:<index>}`` placeholders of the plan -> ``@<username>``."""
    while "@{user:" in text:
        start = text.index("@{user:")
        end = text.index("}", start)
        text = text[:start] + "@" + names[int(text[start + 7 : end])] + text[end + 1 :]
    return text


def write_population(
    plan: Plan, container: Container, writer: ImportWriter, progress: Progress
) -> Written:
    """Write ``plan`` into the stores ``container`` points at; what was written. Each store's
    items come from its own bulk import (``warble.dal.<store>.import_*``): only the store
    spells its keys."""
    from warble.dal.counters import import_counter
    from warble.dal.graph import import_follow, import_meta
    from warble.dal.hashtags import RedisTrends, import_use
    from warble.dal.likes import import_like
    from warble.dal.notifications import import_notification
    from warble.dal.search import PostgresPeopleIndex
    from warble.dal.tweets import import_tweet
    from warble.domain.graph.service import GraphPolicy
    from warble.domain.hashtags.ports import TagUse
    from warble.domain.hashtags.service import WINDOW_MS
    from warble.domain.text import hashtags
    from warble.domain.tweets.ports import StoredTweet
    from warble.events import Change, Followed, Liked, TweetPosted
    from warble.ids import decompose
    from warble.security import hash_password

    s = container.settings
    mint = container.ids.next_id
    user_ids = [mint() for _ in range(plan.users)]
    run = _base36(user_ids[0] % 36**6)
    names = _names(run, plan.users)
    written = Written(run, user_ids, names)

    # ---- users (PostgreSQL, one COPY) --------------------------------------------------------
    advance = progress.phase("users", plan.users)
    password_hash = hash_password(PASSWORD, 4)
    buffer = io.StringIO()
    for index, (uid, name) in enumerate(zip(user_ids, names, strict=True)):
        display = _display_name(index)
        buffer.write(f"{uid}\t{name}\t{name}@example.com\t{password_hash}\t{display}\n")

    def copy(conn: Any) -> None:
        columns = "id, username, email, password_hash, display_name"
        with (
            conn.transaction(),
            conn.cursor() as cursor,
            cursor.copy(f"COPY users ({columns}) FROM STDIN") as pipe,
        ):
            pipe.write(buffer.getvalue())

    container.database.run(copy)
    advance(plan.users)

    # ---- follows: edges, lists, friend flags, following_count, followers' spread ------------
    edges = set(plan.follows)
    advance = progress.phase("follows", len(plan.follows))
    events: list[Any] = []
    out_degree: Counter[int] = Counter()
    in_degree = Counter(user_ids[b] for _, b in plan.follows)
    spread = {uid: GraphPolicy().follower_shards(n) for uid, n in in_degree.items()}
    for a, b in plan.follows:
        seq = mint()
        ua, ub = user_ids[a], user_ids[b]
        for table, item in import_follow(s, ua, ub, seq, (b, a) in edges, spread[ub]):
            writer.put(table, item)
        out_degree[ua] += 1
        events.append(Followed(ua, ub, seq))
        advance()
    for uid in out_degree.keys() | {uid for uid, n in spread.items() if n > 1}:
        writer.put(*import_meta(s, uid, out_degree[uid], spread.get(uid, 1)))
    writer.flush()
    advance(0)  # the phase's time includes its last writes

    # ---- tweets, replies, retweets ----------------------------------------------------------
    advance = progress.phase("tweets", len(plan.tweets))
    tweet_ids: list[int] = []
    authors: list[int] = []
    # Hashtag timelines and trends, as the ReactionsConsumerFunction would derive them: each tag
    # on one shard (the seed's rate per tag stays under a shard's, warble.domain.hashtags).
    uses: list[tuple[TagUse, int]] = []
    for planned in plan.tweets:
        tid, author = mint(), user_ids[planned.author]
        tweet_ids.append(tid)
        authors.append(author)
        text = _mentions(planned.text, names)
        reply_to = None if planned.reply_to is None else tweet_ids[planned.reply_to]
        retweet_of = None if planned.retweet_of is None else tweet_ids[planned.retweet_of]
        parent_author = None if planned.reply_to is None else authors[planned.reply_to]
        original_author = None if planned.retweet_of is None else authors[planned.retweet_of]
        tags = hashtags(text) if retweet_of is None else ()
        stored = StoredTweet(
            tid, author, text, decompose(tid)[0], reply_to=reply_to,
            reply_to_author=parent_author, retweet_of=retweet_of,
            retweet_of_author=original_author, hashtags=tags,
        )  # fmt: skip
        for table, item in import_tweet(s, stored):
            writer.put(table, item)
        for tag in tags:
            use = TagUse(tag, tid, author)
            writer.put(*import_use(s, use))
            uses.append((use, decompose(tid)[0]))
        events.append(
            TweetPosted(tid, author, text, reply_to, parent_author, retweet_of, original_author,
                        hashtags=tags)
        )  # fmt: skip
        advance()
    writer.flush()
    trends = RedisTrends(container.redis, WINDOW_MS)
    for start in range(0, len(uses), 1000):
        trends.apply(uses[start : start + 1000], [], decompose(container.ids.next_id())[0])
    advance(0)  # the phase's time includes its last writes
    written.tweet_ids = tweet_ids
    written.tags = [tag for tag, _ in Counter(u.tag for u, _ in uses).most_common(200)]

    # ---- likes ------------------------------------------------------------------------------
    advance = progress.phase("likes", len(plan.likes))
    for u, t in plan.likes:
        seq, uid, tid, author = mint(), user_ids[u], tweet_ids[t], authors[t]
        for table, item in import_like(s, uid, tid, author, seq):
            writer.put(table, item)
        events.append(Liked(uid, tid, author, seq))
        advance()
    writer.flush()
    advance(0)  # the phase's time includes its last writes

    # ---- what the streams would have derived: counters, notifications -----------------------
    advance = progress.phase("counters", len(events))
    totals: dict[tuple[str, str], int] = defaultdict(int)
    rules = container.counter_rules
    for index, event in enumerate(events):
        for delta in rules.deltas(Change(str(index), str(index), (event,))):
            totals[(delta.key, delta.field)] += delta.amount
        advance()
    by_key: dict[str, dict[str, int]] = defaultdict(dict)
    for (key, name), value in totals.items():
        if value:
            by_key[key][name] = value
    for key, values in by_key.items():
        writer.put(*import_counter(s, key, values))
    writer.flush()
    advance(0)  # the phase's time includes its last writes
    threshold = s.celebrity_followers
    written.celebrities = sorted(
        uid for uid in user_ids if by_key.get(f"U#{uid}", {}).get("followers_count", 0) > threshold
    )
    # People search orders its candidates by its copy of followers_count (the counter consumer
    # keeps it; here the counts were derived in bulk): one UPDATE.
    PostgresPeopleIndex(container.database).set_followers(
        {uid: by_key.get(f"U#{uid}", {}).get("followers_count", 0) for uid in user_ids}
    )

    directory = _Directory(names, user_ids)
    from warble.services.notifications import producers as notification_producers

    producers = notification_producers()
    advance = progress.phase("notifications", len(events))
    notified = 0
    for event in events:
        for draft in producers.drafts(event, directory):
            if draft.actor == draft.recipient:
                continue  # nobody is notified of their own action (NotificationService.notify)
            for table, item in import_notification(
                s, draft.recipient, draft.dedupe, mint(), draft.kind, draft.actor,
                draft.tweet_id, draft.tweet_author,
            ):  # fmt: skip
                writer.put(table, item)
            notified += 1
        advance()
    writer.flush()
    advance(0)  # the phase's time includes its last writes

    # ---- conversations (no stream: through the service) -------------------------------------
    advance = progress.phase("conversations", len(plan.conversations))
    service = container.conversations
    for a, b, messages in plan.conversations:
        view, _ = service.open(user_ids[a], user_ids[b])
        conversation_id = int(view.id)
        written.conversation_ids.append(conversation_id)
        for k in range(messages):
            sender = user_ids[a] if k % 2 == 0 else user_ids[b]
            service.send(sender, conversation_id, f"message {k + 1}")
        advance()

    # ---- locations (Discover) ---------------------------------------------------------------
    advance = progress.phase("locations", len(plan.located))
    placed = [(user_ids[u], lat, lon) for u, lat, lon in plan.located]
    for start in range(0, len(placed), 500):
        container.discover.place_many(placed[start : start + 500])
        advance(len(placed[start : start + 500]))

    written.counts = {
        "users": plan.users,
        "follows": len(plan.follows),
        "tweets": sum(1 for t in plan.tweets if t.reply_to is None and t.retweet_of is None),
        "replies": sum(1 for t in plan.tweets if t.reply_to is not None),
        "retweets": sum(1 for t in plan.tweets if t.retweet_of is not None),
        "likes": len(plan.likes),
        "notifications": notified,
        "conversations": len(plan.conversations),
        "messages": sum(m for _, _, m in plan.conversations),
        "located": len(plan.located),
        "celebrities": len(written.celebrities),
        "dynamodb_items": writer.written,
    }
    return written


class _Directory:
    """Mentions resolved against the population (the names the plan can mention)."""

    def __init__(self, names: list[str], ids: list[int]) -> None:
        self._ids = {name.lower(): uid for name, uid in zip(names, ids, strict=True)}

    def ids_by_usernames(self, usernames: list[str]) -> dict[str, int]:
        return {n.lower(): self._ids[n.lower()] for n in usernames if n.lower() in self._ids}


# --------------------------------------------------------------------------------------------
# The stack's settings, the manifest, the command
# --------------------------------------------------------------------------------------------


def manifest(written: Written, plan: Plan, full: bool) -> dict[str, Any]:
    followers = Counter(b for _, b in plan.follows)
    doc: dict[str, Any] = {
        "run": written.run,
        "password": PASSWORD,
        "counts": written.counts,
        "users": [
            {"id": str(uid), "username": name}
            for uid, name in zip(written.user_ids, written.usernames, strict=True)
        ],
        "celebrities": [str(uid) for uid in written.celebrities],
        # Most followed first: the load test draws whom a user views or follows by this rank.
        "by_followers": [
            str(written.user_ids[u])
            for u in sorted(range(len(written.user_ids)), key=lambda u: -followers[u])
        ],
        "conversations": [
            [str(cid), str(written.user_ids[a]), str(written.user_ids[b])]
            for cid, (a, b, _) in zip(written.conversation_ids, plan.conversations, strict=True)
        ],
        "tweets_sample": [str(t) for t in written.tweet_ids[-2000:]],
        "tags": written.tags,
        "display_names": [_display_name(i) for i in range(min(len(written.user_ids), 200))],
        "probe": _probe(written, plan),
    }
    if full:
        ids, tweets = written.user_ids, written.tweet_ids
        doc["plan"] = {
            "follows": [[str(ids[a]), str(ids[b])] for a, b in plan.follows],
            "tweets": [
                {
                    "id": str(tweets[i]),
                    "author": str(ids[t.author]),
                    "text": _mentions(t.text, written.usernames),
                    "reply_to": None if t.reply_to is None else str(tweets[t.reply_to]),
                    "retweet_of": None if t.retweet_of is None else str(tweets[t.retweet_of]),
                }
                for i, t in enumerate(plan.tweets)
            ],
            "likes": [[str(ids[u]), str(tweets[t])] for u, t in plan.likes],
        }
    return doc


def _probe(written: Written, plan: Plan) -> dict[str, str] | None:
    """The load test's fan-out probe: the most followed author who is fanned out to (not a
    celebrity), and the follower its fan-out writes last (the oldest follow: the fan-out reads
    followers newest first)."""
    followers: dict[int, list[int]] = defaultdict(list)
    for a, b in plan.follows:  # in follow order: the first is the oldest
        followers[b].append(a)
    celebrities = set(written.celebrities)
    ids = written.user_ids
    fanned = [b for b in followers if ids[b] not in celebrities]
    if not fanned:
        return None
    author = max(fanned, key=lambda b: len(followers[b]))
    return {
        "author": str(ids[author]),
        "followers": str(len(followers[author])),
        "last_follower": str(ids[followers[author][0]]),
    }


def _peak_memory_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def moto_memory_mb(endpoint_url: str) -> float | None:
    """The local moto server's resident memory (its peak), when it runs on this machine: the
    process whose command line serves the endpoint's port (Linux /proc only)."""
    port = str(urlparse(endpoint_url).port or "")
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
            flags = itertools.pairwise(args)
            served = any(flag == b"-p" and value == port.encode() for flag, value in flags)
            if not served or b"moto" not in b" ".join(args):
                continue
            for line in (proc / "status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            continue
    return None


def run(args: argparse.Namespace) -> int:
    os.environ.update(stack_environment(args))
    from warble import services

    services.reset()
    container = services.container()
    sizes = Sizes.small() if args.small else Sizes()
    overrides = {
        name: value
        for name in ("users", "follows", "tweets", "likes", "conversations")
        if (value := getattr(args, name)) is not None
    }
    sizes = Sizes(**{**sizes.__dict__, **overrides})
    started = time.monotonic()
    with Progress(not args.quiet and sys.stderr.isatty()) as progress:
        advance = progress.phase("plan", 1)
        settings = container.settings
        plan = plan_population(
            sizes, settings.follow_limit, args.seed, settings.celebrity_followers
        )
        advance()
        writer = ImportWriter(args.endpoint_url, args.region)
        try:
            written = write_population(plan, container, writer, progress)
        finally:
            writer.close()
    elapsed = time.monotonic() - started
    doc = manifest(written, plan, full=len(plan.follows) <= FULL_PLAN_FOLLOWS)
    doc["seconds"] = round(elapsed, 1)
    doc["peak_memory_mb"] = round(_peak_memory_mb(), 1)
    moto = moto_memory_mb(args.endpoint_url)
    doc["moto_peak_memory_mb"] = None if moto is None else round(moto, 1)
    doc["phases"] = {name: round(sec, 2) for name, sec in progress.timings.items()}
    args.manifest.parent.mkdir(parents=True, exist_ok=True)
    args.manifest.write_text(json.dumps(doc))
    _summary(progress, written, plan, container.settings, doc, args)
    services.use(None)
    return 0


def _summary(
    progress: Progress, written: Written, plan: Plan, settings: Any, doc: dict[str, Any],
    args: argparse.Namespace,
) -> None:  # fmt: skip
    from rich.table import Table

    followers = Counter(b for _, b in plan.follows)
    following = Counter(a for a, _ in plan.follows)
    top = [c for _, c in followers.most_common(5)]
    median_following = sorted(following.values())[len(following) // 2] if following else 0
    table = Table(title=f"seeded population s{written.run}_* (password {PASSWORD})")
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_column("phase seconds", justify="right")
    phase_of = {"users": "users", "follows": "follows", "tweets": "tweets", "likes": "likes",
                "notifications": "notifications", "conversations": "conversations",
                "located": "locations"}  # fmt: skip
    for what, count in written.counts.items():
        seconds = doc["phases"].get(phase_of.get(what, ""), "")
        table.add_row(what, f"{count:,}", f"{seconds}" if seconds != "" else "")
    progress.console.print(table)
    threshold = settings.celebrity_followers
    note = "" if written.celebrities else (
        f" (none: {plan.users:,} users cannot pass CELEBRITY_FOLLOWERS={threshold:,}; "
        "lower it or seed more users)"
    )  # fmt: skip
    progress.console.print(
        f"followers of the top 5 accounts: {top}; median following: {median_following}; "
        f"celebrities above {threshold:,}: {len(written.celebrities)}{note}\n"
        f"{doc['seconds']} s, peak memory {doc['peak_memory_mb']} MB (this process), "
        f"{doc['moto_peak_memory_mb']} MB (the moto server, all its tables); "
        f"manifest: {args.manifest}"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = Sizes()
    parser.add_argument("--small", action="store_true", help="a small population (tests)")
    parser.add_argument("--users", type=int, help=f"default {defaults.users:,}")
    parser.add_argument("--follows", type=int, help=f"default {defaults.follows:,}")
    parser.add_argument(
        "--tweets", type=int, help=f"tweets, replies and retweets, default {defaults.tweets:,}"
    )
    parser.add_argument("--likes", type=int, help=f"default {defaults.likes:,}")
    parser.add_argument("--conversations", type=int, help=f"default {defaults.conversations}")
    parser.add_argument("--seed", type=int, default=1, help="randomness (the plan's shape)")
    parser.add_argument(
        "--endpoint-url", default="http://127.0.0.1:5005", help="the stack's moto server"
    )
    parser.add_argument(
        "--manifest", type=Path, default=ROOT / "bench/results/population.json",
        help="where to write the users (and, for small populations, the whole plan)",
    )  # fmt: skip
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
