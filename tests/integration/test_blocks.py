"""Blocks and mutes against real Redis (single node and cluster), moto and PostgreSQL: the six
operations, the relationships' flags, a block ending both follows and refusing new ones, the
blocks hashes kept exact through a flush and the stream's copies, and the races of a follow
with a block, forced in both orders."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from redis.cluster import RedisCluster
from warble import services
from warble.dal import redis as redis_dal
from warble.dal.graph import DynamoGraphStore
from warble.dal.likes import LikeStore
from warble.domain.blocks.service import Flags
from warble.entrypoints.streams import notifier, timeline
from warble.errors import Blocked, NotAllowed, NotFound, ValidationFailed

from tests.support.streams import StreamTap, decoded

# The tests of what lives in Redis (the blocks hashes, the filtered reads, Discover's script)
# run on one node and again on a cluster; the rest are the tables' rules, run once.
pytestmark = pytest.mark.integration

PASSWORD = "password1"


class Interleave:
    """The container's id generator, running ``step`` once just before the next id is minted:
    every write mints its id between its reads and its transaction, so a step placed there
    commits inside that window."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.step: Callable[[], Any] | None = None

    def next_id(self) -> int:
        step, self.step = self.step, None
        if step is not None:
            step()
        return int(self._real.next_id())


class World:
    def __init__(self) -> None:
        container = services.container()
        self.ids = Interleave(container.ids)
        container.ids = self.ids  # type: ignore[misc]  (before any service is built)
        settings = container.settings
        self.tap = StreamTap([settings.graph_table, settings.tweets_table, settings.likes_table])
        self.store = DynamoGraphStore(settings)

    def user(self, name: str) -> int:
        signed = services.accounts().signup(name, f"{name}@example.com", PASSWORD, None, "")
        return int(signed.user["id"])

    def follows(self, a: int, b: int) -> bool:
        return self.store.pair(a, b)[0] is not None

    def settle(self) -> None:
        """What the stream consumers do with the records so far: counters, home timelines,
        following sets and blocks hashes."""
        records = self.tap.drain()
        services.container().count_batch({"Records": records})
        for change in decoded(records):
            for event in change.events:
                timeline.deliver(event)


@pytest.fixture
def world(accounts, moto, redis) -> Iterator[World]:
    yield World()


def _flags(viewer: int, other: int) -> tuple[str, Flags]:
    [item] = services.blocks().relationships(viewer, [str(other)]).items
    return item.status, Flags(item.blocking, item.blocked_by, item.muting)


@pytest.mark.redis
def test_block_and_mute_are_idempotent_listed_and_flagged(world):
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    blocks = services.blocks()
    assert blocks.block(alice, bob).blocking is True
    assert blocks.block(alice, bob).blocking is True
    assert blocks.mute(alice, carol).muting is True
    assert blocks.mute(alice, carol).muting is True
    blocks.block(alice, carol)
    assert [u.id for u in blocks.listed(alice, "blocks", 20, None).items] == [
        str(carol),
        str(bob),
    ]
    assert [u.id for u in blocks.listed(alice, "mutes", 20, None).items] == [str(carol)]
    assert _flags(alice, bob) == ("none", Flags(blocking=True))
    assert _flags(bob, alice) == ("none", Flags(blocked_by=True))
    assert _flags(alice, carol) == ("none", Flags(blocking=True, muting=True))
    assert _flags(carol, alice) == ("none", Flags(blocked_by=True))  # a mute is invisible
    assert blocks.unblock(alice, bob).blocking is False
    assert blocks.unblock(alice, bob).blocking is False
    assert blocks.unmute(alice, carol).muting is False
    assert _flags(alice, bob) == ("none", Flags())
    assert _flags(bob, alice) == ("none", Flags())
    assert _flags(alice, carol) == ("none", Flags(blocking=True))
    page = blocks.listed(alice, "blocks", 1, None)
    assert [u.id for u in page.items] == [str(carol)] and page.next_cursor is None


def test_blocking_yourself_or_nobody_is_refused(world):
    alice = world.user("alice")
    with pytest.raises(ValidationFailed):
        services.blocks().block(alice, alice)
    with pytest.raises(ValidationFailed):
        services.blocks().mute(alice, alice)
    with pytest.raises(NotFound):
        services.blocks().block(alice, alice + 1)


def test_a_block_ends_both_follows_and_refuses_new_ones(world):
    alice, bob = world.user("alice"), world.user("bob")
    graph = services.graph()
    graph.follow(alice, bob)
    graph.follow(bob, alice)
    tweet = services.tweets().post(bob, "before the block", None, [])
    world.settle()
    assert services.timelines().home(alice, 20, None).items[0].id == tweet.id
    assert graph.counts([alice, bob])[alice] == {
        "followers_count": 1, "following_count": 1, "tweet_count": 0,
    }  # fmt: skip
    services.blocks().block(alice, bob)
    assert not world.follows(alice, bob) and not world.follows(bob, alice)
    assert _flags(alice, bob) == ("none", Flags(blocking=True))
    for a, b in ((alice, bob), (bob, alice)):
        with pytest.raises(Blocked):
            graph.follow(a, b)
    world.settle()  # counts settle and home timelines lose the other's tweets, as on unfollow
    counts = graph.counts([alice, bob])
    assert counts[alice]["followers_count"] == counts[alice]["following_count"] == 0
    assert counts[bob]["followers_count"] == counts[bob]["following_count"] == 0
    assert services.timelines().home(alice, 20, None).items == []
    services.blocks().unblock(alice, bob)
    assert not world.follows(alice, bob)  # unblocking restores no follow
    assert graph.follow(bob, alice).relationship == "following"


def test_a_follow_racing_a_block_never_survives_it(world):
    alice, bob = world.user("alice"), world.user("bob")
    graph, blocks = services.graph(), services.blocks()
    # The block commits between the follow's read and its transaction: the follow is refused.
    world.ids.step = lambda: blocks.block(bob, alice)
    with pytest.raises(Blocked):
        graph.follow(alice, bob)
    assert not world.follows(alice, bob)
    blocks.unblock(bob, alice)
    # The follow commits between the block's read and its transaction: the block reads again
    # and ends it.
    world.ids.step = lambda: graph.follow(alice, bob)
    blocks.block(bob, alice)
    assert not world.follows(alice, bob) and not world.follows(bob, alice)
    assert _flags(alice, bob) == ("none", Flags(blocked_by=True))


def _drop_memory(redis: Any) -> None:
    if isinstance(redis, RedisCluster):
        redis.flushall(target_nodes=RedisCluster.PRIMARIES)
    else:
        redis.flushdb()


@pytest.mark.redis
def test_the_blocks_hashes_stay_exact_through_a_flush_and_the_streams_copies(world, redis):
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    blocks = services.blocks()
    _flags(alice, bob), _flags(bob, alice), _flags(carol, alice)  # the hashes are loaded
    blocks.block(alice, bob)
    blocks.mute(alice, carol)
    blocks.unblock(alice, bob)
    blocks.block(carol, alice)
    expected = {
        (alice, bob): Flags(),
        (bob, alice): Flags(),
        (alice, carol): Flags(blocked_by=True, muting=True),
        (carol, alice): Flags(blocking=True),
    }

    def check() -> None:
        for (a, b), flags in expected.items():
            assert _flags(a, b)[1] == flags, (a, b)

    check()
    events = [e for change in decoded(world.tap.drain()) for e in change.events]
    for event in events + events[::-1]:  # twice, then a late duplicate in reverse order
        timeline.deliver(event)
    check()
    _drop_memory(redis)
    check()


def test_the_blocked_cannot_like_retweet_or_reply_to_the_blockers_tweets(world):
    alice, bob = world.user("alice"), world.user("bob")
    tweets, likes = services.tweets(), services.likes()
    mine = int(tweets.post(alice, "alice's", None, []).id)
    theirs = int(tweets.post(bob, "bob's", None, []).id)
    services.blocks().block(alice, bob)
    with pytest.raises(Blocked):
        likes.like(bob, mine)
    with pytest.raises(Blocked):
        tweets.retweet(bob, mine)
    with pytest.raises(Blocked):
        tweets.post(bob, "a reply", mine, [])
    assert tweets.get(alice, mine).reply_count == 0
    assert tweets.replies(alice, mine, 20, None).items == []
    # The blocker is not refused (API.md: B cannot act on A's tweets).
    assert likes.like(alice, theirs) is True
    services.blocks().unblock(alice, bob)
    assert likes.like(bob, mine) is True


def test_a_reply_to_a_retweet_is_a_reply_to_its_original_so_the_block_holds(world):
    """Issue 33 item 8: A blocks B; C retweets A's tweet; B's reply to C's retweet was 201 and
    counted in the retweet's reply_count. A reply to a retweet replies to its original."""
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    tweets = services.tweets()
    original = int(tweets.post(alice, "alice's", None, []).id)
    retweet, _ = tweets.retweet(carol, original)
    services.blocks().block(alice, bob)
    with pytest.raises(Blocked):
        tweets.post(bob, "around the block", int(retweet.id), [])
    # and anyone else's reply to the retweet lands on the original, counted there
    reply = tweets.post(carol, "a reply", int(retweet.id), [])
    assert reply.reply_to == str(original)
    world.settle()
    assert tweets.get(alice, original).reply_count == 1
    assert tweets.get(carol, int(retweet.id)).retweet_of.reply_count == 1
    assert [t.id for t in tweets.replies(alice, original, 20, None).items] == [reply.id]
    assert tweets.replies(alice, int(retweet.id), 20, None).items == []


def test_a_like_racing_a_block_lands_before_it_or_not_at_all(world):
    alice, bob = world.user("alice"), world.user("bob")
    tweets, likes, blocks = services.tweets(), services.likes(), services.blocks()
    first = int(tweets.post(alice, "first", None, []).id)
    second = int(tweets.post(alice, "second", None, []).id)
    likes.like(bob, first)  # lands before the block: it stays
    # The block is acknowledged between the like's read of the tweet and its transaction.
    world.ids.step = lambda: blocks.block(alice, bob)
    with pytest.raises(Blocked):
        likes.like(bob, second)
    store = LikeStore(services.container().settings)  # the table's own answer
    assert store.edge(bob, second) is None
    assert store.edge(bob, first) is not None


def _friends_with_a_conversation(world: World) -> tuple[int, int, int]:
    alice, bob = world.user("alice"), world.user("bob")
    services.conversations().match(alice, bob)  # matched: they may converse without a follow
    conversation = services.conversations().open(alice, bob)[0]
    return alice, bob, int(conversation.id)


def test_no_message_crosses_a_block_and_the_history_stays(world):
    alice, bob, conversation = _friends_with_a_conversation(world)
    conversations = services.conversations()
    conversations.send(alice, conversation, "hi bob")
    services.blocks().block(bob, alice)
    for sender in (alice, bob):
        with pytest.raises(NotAllowed):
            conversations.send(sender, conversation, "still there?")
    with pytest.raises(NotAllowed):
        conversations.open(alice, bob)
    history = conversations.history(bob, conversation, 20, None)
    assert [m.text for m in history.items] == ["hi bob"]
    services.blocks().unblock(bob, alice)
    conversations.send(bob, conversation, "back")


def test_a_message_racing_a_block_lands_before_it_or_not_at_all(world):
    alice, bob, conversation = _friends_with_a_conversation(world)
    conversations, blocks = services.conversations(), services.blocks()
    conversations.send(alice, conversation, "before")
    # The permission check passed; the block is acknowledged before the send's transaction.
    world.ids.step = lambda: blocks.block(bob, alice)
    with pytest.raises(NotAllowed):
        conversations.send(alice, conversation, "after")
    history = conversations.history(bob, conversation, 20, None)
    assert [m.text for m in history.items] == ["before"]


def _notified(world: World) -> None:
    """The notifications consumer over the records so far."""
    for change in decoded(world.tap.drain()):
        for event in change.events:
            notifier.deliver(event)


def _kinds(user: int) -> list[tuple[str, int | None]]:
    items = services.notifications().page(user, None, 50, None).items
    return sorted((n.type, int(n.actor.id) if n.actor else None) for n in items)


@pytest.mark.redis
def test_no_notification_crosses_a_block_or_comes_from_a_muted_user(world):
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    tweets, likes, blocks = services.tweets(), services.likes(), services.blocks()
    bobs = int(tweets.post(bob, "bob's", None, []).id)
    carols = int(tweets.post(carol, "carol's", None, []).id)
    alices = int(tweets.post(alice, "alice's", None, []).id)
    blocks.block(alice, bob)
    blocks.mute(alice, carol)
    _notified(world)
    # Across the block, both ways (mentions included), and from the muted user.
    tweets.post(bob, "hey @alice", None, [])
    tweets.post(alice, "hey @bob", None, [])
    likes.like(alice, bobs)  # the blocker may act on the blocked's tweets: no notification
    likes.like(carol, alices)
    tweets.post(carol, "@alice look", None, [])
    services.graph().follow(carol, alice)
    likes.like(alice, carols)  # a mute is one-way: carol is notified
    _notified(world)
    assert _kinds(alice) == []
    assert _kinds(bob) == []
    assert _kinds(carol) == [("like", alice)]
    blocks.unmute(alice, carol)
    tweets.post(carol, "@alice again", None, [])
    _notified(world)
    assert _kinds(alice) == [("mention", carol)]


@pytest.mark.redis
def test_discover_never_shows_the_pair_and_their_right_swipes_never_match(world):
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    discover = services.discover()
    for uid, lat in ((alice, 48.85), (bob, 48.851), (carol, 48.852)):
        discover.set_location(uid, lat, 2.35)
    services.blocks().block(alice, bob)
    assert [n.user_id for n in discover.discover(alice, 10, 20)] == [carol]
    assert [n.user_id for n in discover.discover(bob, 10, 20)] == [carol]
    services.blocks().unblock(alice, bob)
    # Bob was skipped, not marked shown: the next feed (here another radius) offers him.
    assert [n.user_id for n in discover.discover(alice, 11, 20)] == [bob]
    services.blocks().block(bob, alice)
    assert discover.swipe(alice, bob, "right").matched is False
    assert discover.swipe(bob, alice, "right").matched is False
    # A right swipe made before the block does not match after it either.
    discover.swipe(carol, alice, "right")
    services.blocks().block(alice, carol)
    assert discover.swipe(alice, carol, "right").matched is False


def _home(viewer: int, limit: int = 20, cursor: str | None = None) -> list[str]:
    return [t.text for t in services.timelines().home(viewer, limit, cursor).items]


def _round_trips(run: Callable[[], Any]) -> tuple[Any, int]:
    """What ``run`` answers, and how many Redis round trips it made: pipelines sent (one per
    node on a cluster counts once; a ReadBatch's on a single node) and single commands."""
    client = services.container().redis
    original_pipeline, original_command = client.pipeline, client.execute_command
    original_send = redis_dal.send_pipelined
    sent = []

    def send(*args: Any, **kwargs: Any) -> Any:
        sent.append("pipeline")
        return original_send(*args, **kwargs)

    def pipeline(*args: Any, **kwargs: Any) -> Any:
        pipe = original_pipeline(*args, **kwargs)
        execute = pipe.execute

        def counted(*a: Any, **k: Any) -> Any:
            if len(pipe):
                sent.append("pipeline")
            return execute(*a, **k)

        pipe.execute = counted
        return pipe

    def command(*args: Any, **kwargs: Any) -> Any:
        sent.append(str(args[0]))
        return original_command(*args, **kwargs)

    client.pipeline = pipeline  # type: ignore[method-assign]
    client.execute_command = command  # type: ignore[method-assign]
    redis_dal.send_pipelined = send
    try:
        return run(), len(sent)
    finally:
        client.pipeline = original_pipeline  # type: ignore[method-assign]
        client.execute_command = original_command  # type: ignore[method-assign]
        redis_dal.send_pipelined = original_send


@pytest.mark.redis
def test_home_timeline_replies_and_home_count_leave_out_blocked_and_muted_users(world):
    alice, bob, carol, dave = (world.user(n) for n in ("alice", "bob", "carol", "dave"))
    graph, tweets, blocks = services.graph(), services.tweets(), services.blocks()
    for followee in (bob, carol, dave):
        graph.follow(alice, followee)
    graph.follow(bob, alice)
    world.settle()
    services.notifications().mark_read(alice, ["home"])
    original = int(tweets.post(dave, "dave's", None, []).id)
    tweets.post(bob, "bob's", None, [])
    tweets.post(carol, "carol's", None, [])
    tweets.retweet(dave, int(tweets.post(bob, "bob's second", None, []).id))
    tweets.post(alice, "alice's", None, [])
    tweets.post(bob, "bob replies", original, [])
    tweets.post(carol, "carol replies", original, [])
    world.settle()
    assert _home(alice) == [
        "carol replies", "bob replies", "alice's", "", "bob's second", "carol's", "bob's",
        "dave's",
    ]  # fmt: skip
    assert services.notifications().counts(alice).home == 7
    blocks.mute(alice, carol)
    blocks.block(alice, bob)
    # At once, before the streams end the follows: filtered at read (the retweet of bob's
    # tweet too), on both sides of the block.
    assert _home(alice) == ["alice's", "dave's"]
    assert "alice's" not in _home(bob)
    assert services.notifications().counts(alice).home == 2  # dave's, and his retweet
    replies = [t.text for t in tweets.replies(alice, original, 20, None).items]
    assert replies == ["carol replies"]  # a mute leaves reply lists alone
    assert [t.text for t in tweets.replies(bob, original, 20, None).items] == [
        "carol replies",
        "bob replies",
    ]
    world.settle()
    assert _home(alice) == ["alice's", "dave's"]
    blocks.unmute(alice, carol)
    assert _home(alice) == ["carol replies", "alice's", "carol's", "dave's"]
    assert services.notifications().counts(alice).home == 4


@pytest.mark.redis
def test_a_page_full_of_muted_entries_reads_on_below_them(world):
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    graph, tweets = services.graph(), services.tweets()
    graph.follow(alice, bob)
    graph.follow(alice, carol)
    world.settle()
    for i in range(3):
        tweets.post(carol, f"carol {i}", None, [])
    for i in range(6):
        tweets.post(bob, f"bob {i}", None, [])
    world.settle()
    services.blocks().mute(alice, bob)
    page = services.timelines().home(alice, 2, None)
    assert [t.text for t in page.items] == ["carol 2", "carol 1"]
    assert _home(alice, 2, page.next_cursor) == ["carol 0"]


@pytest.mark.redis
def test_a_warm_home_page_with_blocks_and_mutes_takes_the_round_trips_of_one_without(world):
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    graph, tweets = services.graph(), services.tweets()
    graph.follow(alice, bob)
    graph.follow(alice, carol)
    world.settle()
    for i in range(3):
        tweets.post(carol, f"carol {i}", None, [])
        tweets.post(bob, f"bob {i}", None, [])
    world.settle()
    _home(alice, 2)  # warm: the timeline and the blocks hash are built
    before, unfiltered = _round_trips(lambda: _home(alice, 2))
    assert before == ["bob 2", "carol 2"]
    services.blocks().mute(alice, bob)
    services.blocks().block(alice, world.user("dave"))
    _home(alice, 2)  # warm: "carol 1" is cached
    after, filtered = _round_trips(lambda: _home(alice, 2))
    assert after == ["carol 2", "carol 1"]
    # The timeline with the blocks hash, then the tweets with authors, counters and flags.
    assert filtered == unfiltered == 2
