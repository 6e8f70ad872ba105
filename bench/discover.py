"""Discover: a page of people nearby, a swipe, and the seen filter's false hides and size.

Page: 10,000 located users (real accounts, seeded with ``infra.local.seed_nearby.seed``) within
10 km of Paris, and 40 viewers at the centre; ``GET /v1/discover?limit=20`` through the real
DiscoverFunction handler, the viewers taking turns (each call marks 20 people seen, so one viewer
alone would run out after 500 pages). Baseline: the raw GEOSEARCH of the cells the radius covers
(pipelined, COUNT 200 as the feed's first fill) and one raw EVALSHA of the seen script checking
20 candidates: the Redis work a page needs. The path also hydrates 20 Users (profiles MGET,
counts MGET, the viewer's relationships: one moto BatchGetItem), shown in the breakdown.

Swipe: ``POST /v1/discover/swipes`` through the handler, each call a new pair (left swipes of
viewers on seeded users: the common case; a right swipe that matches adds one transaction and a
push). Baseline: one raw EVALSHA of the swipe script on a new pair key; its calls per second
are the script's swipes/s. The handler also writes the swipe to DynamoDB (moto PutItem).

Seen filter: ids inserted in one user's filter with the real script (1,000 per call), then
100,000 ids never inserted checked; false-positive rate and bytes of the bitmap at 1,000, 10,000
and 100,000 insertions.
"""

from __future__ import annotations

import copy
import itertools
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from bench import stack
from bench.accounts import expect
from bench.harness import Benchmark, Item, Precomputed, Result, Run, fmt_rate, group

CENTRE = (48.8566, 2.3522)
PEOPLE = 10_000
VIEWERS = 40
PAGE = 20


def http_event(issued: Any, method: str, path: str, query: str = "", body: Any = None) -> dict:
    """An HTTP API event for ``method path`` as ``issued``, from another route's sample."""
    evt = copy.deepcopy(stack.event("graph/followers.json"))
    evt["routeKey"] = evt["requestContext"]["routeKey"] = f"{method} {path}"
    evt["rawPath"] = evt["requestContext"]["http"]["path"] = path
    evt["requestContext"]["http"]["method"] = method
    evt["pathParameters"] = {}
    evt["rawQueryString"] = query
    evt["queryStringParameters"] = dict(p.split("=") for p in query.split("&")) if query else {}
    if body is not None:
        evt["body"] = json.dumps(body)
    return stack.as_session(evt, issued)


def swipes_per_second(result: Result) -> list[str]:
    return [
        "swipes/s (one caller): "
        + "; ".join(
            f"{row.label}: {fmt_rate(row.stats.ops_per_s)}"
            for row in (result.path, *result.baselines)
        )
    ]


@dataclass
class DiscoverBench:
    """What the Discover benchmarks share: a bare Redis client, the DiscoverFunction handler,
    the viewers (located at the centre, among the seeded people) and the Discover settings."""

    raw: Any
    handler: Any
    viewers: list[Any]
    settings: Any


@group("discover", "nearby page, swipe and the seen filter against their raw Redis calls")
def discover_group(run: Run) -> Iterator[Item]:
    from warble import services

    from infra.local.seed_nearby import seed

    bench_stack = stack.shared(run)
    raw, _ = stack.raw_clients(run, bench_stack)
    container = services.container()
    accounts = container.accounts
    seed(PEOPLE, *CENTRE, 10.0, prefix="bd", show_progress=False)
    viewers = []
    for n in range(VIEWERS):
        name = f"disc_viewer{n}"
        accounts.signup(name, f"{name}@example.com", "correct horse battery", None, "")
        issued = accounts.login(name, "correct horse battery", "bench")
        container.discover.set_location(int(issued.user["id"]), *CENTRE)
        viewers.append(issued)
    d = DiscoverBench(raw, stack.load_function("discover").handler, viewers, container.settings)
    yield nearby_page(d)
    yield swipe(d)
    yield seen_filter(d)


# ---- GET /v1/discover -------------------------------------------------------------------------


def nearby_page(d: DiscoverBench) -> Benchmark:
    from warble import keys
    from warble.dal.discover import _SEEN_SCRIPT
    from warble.domain.discover.geo import cells_covering

    raw, settings = d.raw, d.settings
    pages = itertools.cycle(
        [
            expect(
                d.handler, http_event(v, "GET", "/v1/discover", f"limit={PAGE}&radius_km=10"), 200
            )
            for v in d.viewers
        ]
    )

    def page() -> Any:
        return next(pages)()

    seen_sha = raw.script_load(_SEEN_SCRIPT)
    cells = cells_covering(*CENTRE, 10.0)
    probe_user = int(d.viewers[0].user["id"])
    user_keys = [
        keys.seen_filter(probe_user),
        keys.seen_meta(probe_user),
        keys.swiped(probe_user),
        keys.feed(probe_user),
        keys.feed_meta(probe_user),
    ]

    def raw_geosearch() -> Any:
        pipe = raw.pipeline(transaction=False)
        for cell in cells:
            pipe.geosearch(
                keys.geo_cell(cell),
                longitude=CENTRE[1],
                latitude=CENTRE[0],
                radius=10,
                unit="km",
                sort="ASC",
                count=200,
                withdist=True,
            )
        return pipe.execute()

    candidates = [str(uid) for uid in range(10**15, 10**15 + PAGE)]

    def raw_filter_check() -> Any:
        return raw.evalsha(
            seen_sha,
            len(user_keys),
            *user_keys,
            "check",
            0,
            settings.seen_filter_capacity,
            settings.seen_filter_error / 2,
            "",
            0,
            *candidates,
        )

    def raw_page() -> Any:
        raw_geosearch()
        return raw_filter_check()

    return Benchmark(
        f"GET /v1/discover, page of {PAGE} among {PEOPLE:,} located users (handler)",
        page,
        raw_page,
        baseline="raw GEOSEARCH of the covered cells + EVALSHA filter check of 20",
        breakdown=[
            ("raw GEOSEARCH alone", raw_geosearch),
            ("raw EVALSHA check alone", raw_filter_check),
        ],
        notes=[f"{len(cells)} cell(s) cover 10 km around the centre; {VIEWERS} viewers take turns"],
        max_iterations=VIEWERS * (PEOPLE // PAGE) // 2,  # never past everyone seen
    )


# ---- swipe ------------------------------------------------------------------------------------


def swipe(d: DiscoverBench) -> Benchmark:
    from warble import keys
    from warble.dal.discover import _SWIPE_SCRIPT
    from warble.domain.discover.geo import cells_covering

    raw, handler = d.raw, d.handler
    cells = cells_covering(*CENTRE, 10.0)
    targets = [int(u) for u in raw.zrange(keys.geo_cell(cells[0]), 0, -1)]
    pairs = itertools.product(d.viewers, targets)

    def swipe_new_pair() -> Any:
        viewer, target = next(pairs)
        body = {"user_id": str(target), "direction": "left"}
        return expect(handler, http_event(viewer, "POST", "/v1/discover/swipes", body=body), 200)()

    swipe_sha = raw.script_load(_SWIPE_SCRIPT)
    fresh = itertools.count(1)

    def raw_swipe() -> Any:
        n = next(fresh)
        a, b = 2 * n, 2 * n + 1
        return raw.evalsha(
            swipe_sha,
            1,
            keys.swipe_pair(a, b),
            a,
            "left",
            b,
            "1",
            "",
            "",
            keys.SWIPE_PAIR_TTL_SECONDS,
        )

    return Benchmark(
        "POST /v1/discover/swipes, a new pair (handler)",
        swipe_new_pair,
        raw_swipe,
        baseline="raw EVALSHA of the swipe script",
        summarize=[swipes_per_second],
    )


# ---- the seen filter --------------------------------------------------------------------------


def seen_filter(d: DiscoverBench) -> Precomputed:
    from warble import keys
    from warble.dal.discover import SeenFilter

    raw, settings = d.raw, d.settings
    seen = SeenFilter(raw, settings.seen_filter_capacity, settings.seen_filter_error)
    notes = []
    insert_ns: list[int] = []
    user = 10**16
    inserted = 0
    others = [str(10**17 + i) for i in range(100_000)]
    for target in (1_000, 10_000, 100_000):
        while inserted < target:
            chunk = [str(i) for i in range(inserted + 1, inserted + 1001)]
            started = time.perf_counter_ns()
            seen.add(user, chunk)
            insert_ns.append(time.perf_counter_ns() - started)
            inserted += 1000
        hidden = sum(
            seen.count_members(user, others[s : s + 5000]) for s in range(0, len(others), 5000)
        )
        layers = raw.hget(keys.seen_meta(user), "layers")
        notes.append(
            f"after {target:,} seen: false hides {hidden:,} of 100,000 ({hidden / 1000:.3f}%),"
            f" {seen.size_bytes(user):,} bytes of bitmap ({layers} layers)"
        )
    check: Callable[[], Any] = lambda: seen.count_members(user, others[:1000])  # noqa: E731
    check_ns = []
    for _ in range(20):
        started = time.perf_counter_ns()
        check()
        check_ns.append(time.perf_counter_ns() - started)
    return Precomputed(
        "seen filter: false hides and bytes per user",
        ("insert 1,000 ids (one EVALSHA)", insert_ns),
        [("check 1,000 non-members at 100,000 seen (one EVALSHA)", check_ns)],
        notes=notes,
    )
