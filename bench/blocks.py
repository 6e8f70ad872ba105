"""Blocks and mutes on the hot paths: a warm home page filtered by them, and the fan-out.

Home page: ``GET /v1/timeline/home?limit=20`` through the real TweetsFunction handler, warm, for
a reader who mutes 100 users and blocks 100 (through BlockService), against the same handler
for a reader with none. Both follow the same five authors; the shielded reader also follows 10
of the users they mute, whose tweets sit among the newest (so the filter has work to do and the
page is still full from the one read of twice the page). The goal is 1.2x: the blocks hash is
one HGETALL in the page's pipeline, so the round trips are the same.

Fan-out: ``TimelineService.tweet_created`` for an author with 10,000 followers, 100 of whom
mute the author, against the same fan-out for an author that nobody mutes (the same followers):
the fan-out reads no blocks or mutes (they are filtered when a timeline is read), so the goal is
1.1x. The followers come from memory as in the timeline group (moto's Query of 10,000 followers
would be all a measurement saw); set-up writes the edges with raw BatchWriteItem in
warble.dal.graph's item shape.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

from bench import stack
from bench.accounts import expect
from bench.harness import Benchmark, Item, Run, group
from bench.timeline import (
    FOLLOWERS,
    PASSWORD,
    Followers,
    RememberedFollowers,
    build_timelines,
    compact,
    home_event,
    make_user,
)

PAGE = 20
MUTED = 100
BLOCKED = 100
MUTED_FOLLOWED = 10  # of the muted users, followed by the reader: their tweets are in the page


@group("blocks", "home page with 100 muted + 100 blocked users vs none; fan-out unchanged")
def blocks_group(run: Run) -> Iterator[Item]:
    bench_stack = stack.shared(run)
    raw, ddb = stack.raw_clients(run, bench_stack)
    yield filtered_home_page(raw)
    yield fanout_to_a_muted_author(run, bench_stack, raw, ddb)


def round_trips(fn: Callable[[], Any]) -> list[str]:
    return compact(stack.traced(fn))


# ---- two readers of the same authors: one with 100 mutes and 100 blocks -------------------------


def filtered_home_page(raw: Any) -> Benchmark:
    from warble import keys, services

    accounts, tweets, timelines = services.accounts(), services.tweets(), services.timelines()
    graph, blocks = services.graph(), services.blocks()
    plain_id, shielded_id = make_user("bk_plain"), make_user("bk_shielded")
    authors = [make_user(f"bk_author_{n}") for n in range(5)]
    muted = [make_user(f"bk_muted_{n}") for n in range(MUTED)]
    blocked = [make_user(f"bk_blocked_{n}") for n in range(BLOCKED)]
    for author in authors:
        graph.follow(plain_id, author)
        graph.follow(shielded_id, author)
    for other in muted[:MUTED_FOLLOWED]:
        graph.follow(shielded_id, other)
    for other in muted:
        blocks.mute(shielded_id, other)
    for other in blocked:
        blocks.block(shielded_id, other)
    # The newest tweets mix the authors' and the followed muted users' (one in three hidden).
    loud = itertools.cycle(muted[:MUTED_FOLLOWED])
    for round_ in range(6):
        for i, author in enumerate(authors):
            tweets.post(author, f"tweet {round_} of {author}", None, [])
            if i % 2 == 0:
                tweets.post(next(loud), "muted", None, [])
    pages = {}
    for reader in (plain_id, shielded_id):
        timelines.rebuild(reader)
        pages[reader] = timelines.home(reader, PAGE, None)
        assert len(pages[reader].items) == PAGE, (reader, len(pages[reader].items))
    assert [t.id for t in pages[plain_id].items] == [t.id for t in pages[shielded_id].items], (
        "both readers see the same page"
    )
    held = raw.hlen(keys.memberships("blocks", shielded_id).value)
    assert held == MUTED + BLOCKED + 1, held  # the hash is loaded (its "*" marker too)

    handler = stack.load_function("tweets").handler
    plain = accounts.login("bk_plain", PASSWORD, "bench")
    shielded = accounts.login("bk_shielded", PASSWORD, "bench")
    read_plain = expect(handler, home_event(plain), 200)
    read_shielded = expect(handler, home_event(shielded), 200)
    read_plain(), read_shielded()

    def same_round_trips() -> list[str]:
        mine, theirs = round_trips(read_shielded), round_trips(read_plain)
        if len(mine) == len(theirs):
            return []
        return [f"the filtered page makes {mine}, the unfiltered one {theirs}"]

    return Benchmark(
        f"GET /v1/timeline/home?limit={PAGE}, {MUTED} muted + {BLOCKED} blocked, all cached",
        read_shielded,
        read_plain,
        path="filtered page (handler)",
        baseline="the same page for a reader with no blocks or mutes (handler)",
        budget_s=8.0,
        warmup=100,
        min_iterations=200,
        max_iterations=3000,
        check=same_round_trips,
        describe=lambda: [f"round trips of one warm call: {round_trips(read_shielded)}"],
        notes=[
            f"the filtered reader's blocks hash holds {MUTED + BLOCKED} users, read with one "
            "HGETALL in the page's pipeline; 10 of the muted users are followed and their "
            "tweets are among the newest 40 entries (the page reads twice its size), so the "
            "filter drops entries and the page is still full; goal 1.2x"
        ],
    )


# ---- fan-out: an author 100 of their followers mute, and one nobody mutes -----------------------


def fanout_to_a_muted_author(run: Run, bench_stack: stack.Stack, raw: Any, ddb: Any) -> Benchmark:
    from warble import services
    from warble.dal.graph import DynamoGraphStore
    from warble.dal.timelines import TimelineStore
    from warble.domain.timelines.service import TimelinePolicy, TimelineService
    from warble.settings import get_settings

    settings = get_settings()
    tweets, graph, blocks = services.tweets(), services.graph(), services.blocks()
    n = max(MUTED + 10, round(FOLLOWERS * run.scale))
    ids = services.ids()
    followers = [ids.next_id() for _ in range(n)]
    seqs = iter(ids.next_id, None)
    edges = Followers(ddb, bench_stack.tables["GraphTable"], bench_stack.tables["CountersTable"])
    quiet_author, muted_author = make_user("bk_fanout_quiet"), make_user("bk_fanout_muted")
    edges.follow_all(quiet_author, followers, seqs)
    edges.follow_all(muted_author, followers, seqs)
    edges.write_meta()
    build_timelines(raw, [*followers, quiet_author, muted_author], settings.timeline_ttl_seconds)
    for follower in followers[:MUTED]:  # mute records as BlockService writes them
        blocks.mute(follower, muted_author)
    remembered = RememberedFollowers(graph, DynamoGraphStore(), {quiet_author: n, muted_author: n})
    service = TimelineService(
        timelines=TimelineStore(
            services.container().redis, cap=settings.timeline_cap,
            recent_cap=settings.author_recent_cap, ttl_seconds=settings.timeline_ttl_seconds,
        ),
        tweets=tweets,
        graph=remembered,
        policy=TimelinePolicy(
            celebrity_followers=settings.celebrity_followers, cap=settings.timeline_cap,
            recent_cap=settings.author_recent_cap, backfill=settings.follow_backfill,
        ),
        shields=services.container().shields,
        muted=services.container().muted_words,
        followers=services.container().stores.memberships("followers"),
    )  # fmt: skip
    tweet_ids = itertools.count(ids.next_id() + 1)

    def fanout(author: int) -> Callable[[], None]:
        return lambda: service.tweet_created(author, next(tweet_ids))

    fan_muted, fan_quiet = fanout(muted_author), fanout(quiet_author)

    def no_lookup_per_follower() -> list[str]:
        mine, theirs = round_trips(fan_muted), round_trips(fan_quiet)
        if len(mine) == len(theirs) and not any("blocks" in call for call in mine):
            return []
        return [f"the fan-out to a muted author makes {mine}, to another {theirs}"]

    return Benchmark(
        f"Fan-out of one tweet to {n:,} followers, {MUTED} of whom mute the author",
        fan_muted,
        fan_quiet,
        path="tweet_created (muted author)",
        baseline=f"the same fan-out for an author nobody mutes ({n:,} followers)",
        budget_s=10.0,
        warmup=2,
        min_iterations=5,
        max_iterations=300,
        check=no_lookup_per_follower,
        describe=lambda: [f"round trips of one call: {', '.join(round_trips(fan_muted))}"],
        notes=[
            "blocks and mutes are filtered when a timeline is read, never at fan-out: the "
            "fan-out makes the same calls whoever mutes the author; goal 1.1x",
            "the followers come from memory (as in the timeline group); every follower has a "
            "built timeline, so every push lands",
        ],
    )
