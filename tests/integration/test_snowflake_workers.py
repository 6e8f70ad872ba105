"""Snowflake worker ids leased from DynamoDB (WorkerLeasesTable, on moto) stay unique across
concurrent generators, and whatever Redis loses (docs/reliability.md, the worker-id leases)."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator

import pytest
from warble import services
from warble.dal.worker_lease import DynamoWorkerLeases, WorkerLeaseItem
from warble.errors import Unavailable, WorkerIdExhausted, WorkerLeaseLost
from warble.http.app import error_response
from warble.ids import WIDE_FROM_MS, LeasedWorker, Snowflake, WorkerIdSource, decompose

pytestmark = [pytest.mark.integration]

T0 = 1_800_000_000_000  # after WIDE_FROM_MS: 65,536 worker ids, 64 ids a millisecond


def _empty_table() -> None:
    with WorkerLeaseItem.batch_write() as batch:
        for item in WorkerLeaseItem.scan(attributes_to_get=["pk"]):
            batch.delete(item)


@pytest.fixture
def leases(moto) -> Iterator[DynamoWorkerLeases]:
    """The stack's lease table, empty before and after the test."""
    store = DynamoWorkerLeases()
    _empty_table()
    yield store
    _empty_table()


@pytest.fixture
def container_source(leases) -> Callable[..., WorkerIdSource]:
    """A new container's worker id, as production wires it (``LeasedWorker`` on the table)."""
    return lambda lease_ms=60_000: LeasedWorker(leases, lease_ms=lease_ms)


def _picks(worker: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next claims' random first pick is ``worker``: the worst case, made certain."""
    monkeypatch.setattr(random, "randrange", lambda n: worker)


def test_concurrent_generators_get_distinct_workers_and_ids(container_source):
    # Given 16 "containers" starting at once, each with its own lease
    generators = [Snowflake(container_source()) for _ in range(16)]
    produced: list[list[int]] = [[] for _ in generators]

    def run(index: int) -> None:
        for _ in range(300):
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


def test_two_live_holders_never_share_an_id_after_redis_loses_every_key(
    container_source, redis, monkeypatch
):
    # Given a live holder that minted under its worker id (one clock for both containers, so
    # a shared worker id would mean the very same ids)
    clock = [T0]
    first = Snowflake(container_source(), clock=lambda: clock[0])
    worker = decompose(first.next_id())[1]
    # When the cache loses every key (a failover to an empty replica) while it lives
    redis.flushdb()
    assert redis.dbsize() == 0
    # and a new container's random pick is that very id
    _picks(worker, monkeypatch)
    second = Snowflake(container_source(), clock=lambda: clock[0])
    from_second = [second.next_id() for _ in range(50)]
    from_first = [first.next_id() for _ in range(50)]
    # Then the newcomer holds another id, and no id is minted twice
    assert decompose(from_second[0])[1] != worker
    assert not set(from_first) & set(from_second)


def test_an_expired_lease_is_claimable_again_and_a_live_one_is_not(container_source, monkeypatch):
    # Given a holder of a 3-second lease that stopped renewing (a frozen or a gone container)
    holder = container_source(lease_ms=3_000)
    worker, _ = holder.current(T0)
    _picks(worker, monkeypatch)
    # When another container claims while the lease lives, it gets another id
    early, _ = container_source(lease_ms=3_000).current(T0 + 2_000)
    assert early != worker
    # and once the lease has ended, the same id
    late, _ = container_source(lease_ms=3_000).current(T0 + 3_001)
    assert late == worker


def test_a_holder_whose_lease_was_taken_refuses_to_mint(container_source, monkeypatch):
    # Given a container frozen past its lease, whose id another container took meanwhile
    clock = [T0]
    frozen = Snowflake(container_source(lease_ms=3_000), clock=lambda: clock[0])
    worker = decompose(frozen.next_id())[1]
    clock[0] += 5_000
    _picks(worker, monkeypatch)
    thief = Snowflake(container_source(lease_ms=3_000), clock=lambda: clock[0])
    taken = thief.next_id()
    assert decompose(taken)[1] == worker
    # When the frozen one wakes and mints, its renewal fails: a 503, no id under the lost lease
    with pytest.raises(WorkerLeaseLost) as refused:
        frozen.next_id()
    assert isinstance(refused.value, Unavailable) and refused.value.retry_after >= 1
    # Then its next request claims another id, and mints nothing the thief mints
    monkeypatch.undo()
    again = [frozen.next_id() for _ in range(20)]
    assert decompose(again[0])[1] != worker
    assert not set(again) & {taken, *(thief.next_id() for _ in range(20))}


def test_every_id_held_is_a_503_with_retry_after(container_source, leases):
    # Given all 1,024 ids held by live containers, before the cutover (the 65,536 after it are
    # tests/unit/test_ids.py's, in memory)
    before = WIDE_FROM_MS - 120_000
    with WorkerLeaseItem.batch_write() as batch:
        for worker in range(1024):
            batch.save(
                WorkerLeaseItem(worker, holder="live", until_ms=before + 60_000, expires_at=0)
            )
    # When a new container mints its first id
    with pytest.raises(WorkerIdExhausted) as refused:
        Snowflake(container_source(), clock=lambda: before).next_id()
    # Then it is refused as API.md's 503, with a Retry-After
    answer = error_response(refused.value)
    assert answer.status_code == 503
    assert int(answer.headers["Retry-After"]) >= 1


def test_a_released_id_is_claimable_once_past_the_last_millisecond_it_used(
    container_source, monkeypatch
):
    # Given a holder whose clock stands still at T0 while it mints 2 seconds' worth of ids (64 a
    # millisecond: its sequence borrows milliseconds ahead of the clock), then gives its id back
    holder = container_source()
    minting = Snowflake(holder, clock=lambda: T0)
    last = [minting.next_id() for _ in range(64 * 2_000)][-1]
    worker, used = decompose(last)[1], decompose(last)[0]
    assert used == T0 + 1_999
    holder.release()
    _picks(worker, monkeypatch)
    # When a claimant comes whose clock is past T0 but not past the last millisecond it used
    behind, _ = container_source().current(used)
    # Then it does not get the id (it would mint timestamps already used), and one past it does
    # (the lease covers a millisecond more: the one an id after the last could have borrowed)
    assert behind != worker
    past, _ = container_source().current(used + 2)
    assert past == worker


def test_a_clock_gone_backwards_still_renews_the_lease(container_source, monkeypatch):
    """Elapsed time computed across a backwards step is negative: it must renew (and so find
    out whether the lease is still ours), not assume the lease is fresh."""
    lease = container_source(lease_ms=3_000)
    worker, _ = lease.current(T0)
    _picks(worker, monkeypatch)
    container_source(lease_ms=3_000).current(T0 + 60_000 + 3_001)  # taken after a long freeze
    with pytest.raises(WorkerLeaseLost):
        lease.current(T0 - 1_000)  # the clock stepped back a second


def test_the_functions_mint_under_a_lease_in_the_table(leases):
    # Given the production wiring of a container
    services.reset()
    try:
        # When it mints its first id
        worker = decompose(services.ids().next_id())[1]
        # Then the table holds that id's lease, ending about a minute on
        item = WorkerLeaseItem.get(worker, consistent_read=True)
        assert item.until_ms > decompose(services.ids().next_id())[0] + 30_000
    finally:
        services.reset()
