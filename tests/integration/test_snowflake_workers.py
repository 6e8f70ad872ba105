"""Snowflake worker ids leased from Redis stay unique across concurrent generators."""

from __future__ import annotations

import threading

import pytest
from warble import keys
from warble.dal.worker_lease import RedisWorkerLease
from warble.ids import Snowflake, decompose

pytestmark = [pytest.mark.integration, pytest.mark.redis]


def test_concurrent_generators_get_distinct_workers_and_ids(redis):
    # Given 16 "containers" starting at once, each with its own lease
    generators = [Snowflake(RedisWorkerLease(redis)) for _ in range(16)]
    produced: list[list[int]] = [[] for _ in generators]

    def run(index: int) -> None:
        for _ in range(500):
            produced[index].append(generators[index].next_id())

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(generators))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    # Then no two share a worker id and no id repeats
    workers = {decompose(ids[0])[1] for ids in produced}
    assert len(workers) == len(generators)
    everything = [i for ids in produced for i in ids]
    assert len(set(everything)) == len(everything)
    for ids in produced:
        assert ids == sorted(ids)


def test_a_lost_lease_is_replaced_and_the_next_holder_starts_above_the_last(redis):
    clock = [1_800_000_000_000]
    lease = RedisWorkerLease(redis, lease_ms=3_000)
    first = Snowflake(lease, clock=lambda: clock[0])
    first_id = first.next_id()
    worker = decompose(first_id)[1]

    # The container is frozen past its lease and another one claims the same worker id.
    redis.delete(keys.snowflake_worker(worker))
    thief = RedisWorkerLease(redis, lease_ms=3_000)
    redis.set(keys.snowflake_worker(worker), "someone-else", px=3_000)
    clock[0] += 5_000

    # When the first container wakes up, its renewal fails and it claims another id
    second_id = first.next_id()
    assert decompose(second_id)[1] != worker
    assert second_id > first_id
    del thief


def test_new_holder_of_a_worker_id_never_reuses_the_previous_holders_timestamps(redis):
    # Given a previous holder of worker 7 that renewed at t=2_000_000_000_000
    redis.set(keys.snowflake_worker_last(7), 2_000_000_000_000)
    lease = RedisWorkerLease(redis, lease_ms=3_000)
    # Force the claim onto worker 7 by taking every other id
    for other in range(1024):
        if other != 7:
            redis.set(keys.snowflake_worker(other), "busy", px=60_000)
    # When a generator whose clock is behind claims it
    generator = Snowflake(lease, clock=lambda: 1_999_999_999_000)
    timestamp, worker, _ = decompose(generator.next_id())
    # Then it uses worker 7 but only timestamps above the previous holder's window
    assert worker == 7
    assert timestamp >= 2_000_000_000_000 + 1_000


def test_a_clock_gone_backwards_still_renews_the_lease(redis):
    """Elapsed time computed across a backwards step is negative: it must renew (and so find
    out whether the lease is still ours), not assume the lease is fresh."""
    lease = RedisWorkerLease(redis, lease_ms=3_000)
    worker, _ = lease.current(1_000_000)
    redis.delete(keys.snowflake_worker(worker))  # the lease lapsed meanwhile (a long freeze)
    redis.set(keys.snowflake_worker(worker), "someone else", px=3_000)  # and was taken
    again, _ = lease.current(999_000)  # the clock stepped back a second
    assert again != worker  # it noticed the lease was gone and took another id
    assert redis.get(keys.snowflake_worker(again)) is not None
