"""Reconciliation's inputs on the real stores (issue 46): the counters the consumer marks in
Redis (single node and cluster), taken a page at a time, and the rolling sweep's pages of the
counters table in moto, claims skipped and a hot counter's sub-items named by their counter."""

from __future__ import annotations

import random

import pytest
from warble import services
from warble.dal import counters as dal_counters
from warble.events import Change, Liked

pytestmark = pytest.mark.integration


@pytest.mark.redis
def test_marked_counters_are_taken_once_a_page_at_a_time(redis_backend, redis):
    marks = services.container().stores.counter_marks()
    # given: 250 keys over the buckets, some marked twice
    wanted = {f"U#{n}" for n in range(200)} | {f"T#{n}" for n in range(50)}
    marks.mark(wanted)
    marks.mark({f"U#{n}" for n in range(20)})
    # when: taken in pages of 60
    pages = []
    while page := marks.take(60):
        pages.append(page)
    # then: each key once, no page over 60, nothing left
    taken = [key for page in pages for key in page]
    assert sorted(taken) == sorted(wanted)
    assert all(len(page) <= 60 for page in pages) and len(pages) >= 5
    assert marks.take(60) == []
    # and the sweep's cursor is kept between runs
    assert marks.sweep_cursor() is None
    marks.save_sweep_cursor("U#42")
    assert services.container().stores.counter_marks().sweep_cursor() == "U#42"
    marks.save_sweep_cursor(None)
    assert marks.sweep_cursor() is None


def test_the_consumer_marks_a_batch_before_applying_it(moto, redis):
    tweet, author = random.randrange(1 << 40, 1 << 62), random.randrange(1 << 40, 1 << 62)
    change = Change(f"ev-{tweet}", "1", (Liked(user_id=7, tweet_id=tweet, author_id=author),))
    processor = services.container().counter_processor
    assert processor.process([change]).failures == []
    assert f"T#{tweet}" in services.container().stores.counter_marks().take(10_000)


def test_the_sweep_pages_every_counter_once_and_skips_claims(moto):
    store = dal_counters.DynamoCounterStore(3600)
    base = random.randrange(1 << 40, 1 << 50)
    mine = {f"U#{base + n}" for n in range(30)}
    for n, key in enumerate(sorted(mine)):
        store.apply([f"claim-{base}-{n}"], {(key, "followers_count"): 1})
    # when: the whole table swept in pages of 7 items
    seen: list[str] = []
    cursor, pages = None, 0
    while True:
        page, cursor = store.keys_page(cursor, 7)
        seen += page
        pages += 1
        assert len(page) <= 7
        if cursor is None:
            break
    # then: every counter of ours once, no claim
    assert mine <= set(seen)
    assert len([k for k in seen if k in mine]) == len(mine)
    assert not any(k.startswith("claim") for k in seen)
    assert pages > 30 / 7
