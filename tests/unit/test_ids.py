"""Snowflake layout, ordering and clock-skew behaviour (no network)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from warble.errors import WorkerIdExhausted
from warble.ids import (
    CLAIM_TRIES,
    EPOCH_MS,
    MAX_SEQUENCE,
    WIDE_FROM_MS,
    WORKERS,
    FixedWorker,
    LeasedWorker,
    Snowflake,
    compose,
    decompose,
    parse_id,
)

pytestmark = pytest.mark.unit


def test_layout_before_the_cutover_is_41_10_12_bits():
    value = compose(EPOCH_MS + 5, 1023, 4095)
    assert value == (5 << 22) | (1023 << 12) | 4095
    assert decompose(value) == (EPOCH_MS + 5, 1023, 4095)


def test_layout_from_the_cutover_is_41_16_6_bits():
    value = compose(WIDE_FROM_MS + 5, 65_535, 63)
    assert value == ((WIDE_FROM_MS - EPOCH_MS + 5) << 22) | (65_535 << 6) | 63
    assert decompose(value) == (WIDE_FROM_MS + 5, 65_535, 63)
    assert compose(WIDE_FROM_MS - 1, 1023, 4095) < compose(WIDE_FROM_MS, 0, 0)


@pytest.mark.parametrize(
    ("at", "worker", "sequence"),
    [(WIDE_FROM_MS - 1, 1024, 0), (WIDE_FROM_MS, 0, 64), (WIDE_FROM_MS, 65_536, 0)],
)
def test_compose_refuses_what_the_layout_of_its_timestamp_cannot_hold(at, worker, sequence):
    # A worker id above 1,023 before the cutover would spill into the timestamp's bits
    with pytest.raises(ValueError):
        compose(at, worker, sequence)


def test_ids_increase_within_a_millisecond_and_across():
    clock = [EPOCH_MS + 1000]
    gen = Snowflake(FixedWorker(3), clock=lambda: clock[0])
    a, b = gen.next_id(), gen.next_id()
    clock[0] += 1
    c = gen.next_id()
    assert a < b < c
    assert decompose(b)[2] == 1 and decompose(c)[2] == 0


def test_clock_moving_backwards_never_repeats_or_reorders():
    clock = [EPOCH_MS + 10_000]
    gen = Snowflake(FixedWorker(1), clock=lambda: clock[0])
    before = [gen.next_id() for _ in range(3)]
    clock[0] -= 5_000  # NTP step backwards
    after = [gen.next_id() for _ in range(3)]
    assert before + after == sorted(before + after)
    assert len(set(before + after)) == 6


@pytest.mark.parametrize(("at", "max_sequence"), [(EPOCH_MS, 4095), (WIDE_FROM_MS, MAX_SEQUENCE)])
def test_exhausted_sequence_borrows_the_next_millisecond(at, max_sequence):
    gen = Snowflake(FixedWorker(1), clock=lambda: at + 7)
    ids = [gen.next_id() for _ in range(max_sequence + 3)]
    assert len(set(ids)) == len(ids) and ids == sorted(ids)
    assert decompose(ids[-1])[0] == at + 8


def test_ids_fit_a_signed_64_bit_integer_for_69_years():
    assert compose(EPOCH_MS + (1 << 41) - 1, 65_535, 63) < (1 << 63)


def test_ids_stay_unique_and_ordered_across_the_cutover():
    # Given generators on one clock that crosses WIDE_FROM_MS: narrow workers 1 and 2, and
    # wide ones whose 22 low bits would read as theirs if the layout did not follow the
    # timestamp (64: worker 1's sequences 0-63; 65: its 64-127; 128: worker 2's 0-63), with one
    # past the narrow layout (40,000); the wide ones start at the cutover
    clock = [WIDE_FROM_MS - 2]
    narrow = {w: Snowflake(FixedWorker(w), clock=lambda: clock[0]) for w in (1, 2)}
    wide = {w: Snowflake(FixedWorker(w), clock=lambda: clock[0]) for w in (64, 65, 128, 40_000)}
    minted: dict[int, list[int]] = {w: [] for w in [*narrow, *wide]}
    # When the narrow ones mint past 4,096 a millisecond just before it, so that their sequence
    # borrows the cutover's own millisecond, in which the wide ones mint too
    for now in range(WIDE_FROM_MS - 2, WIDE_FROM_MS + 2):
        clock[0] = now
        for w, gen in narrow.items():
            minted[w] += [gen.next_id() for _ in range(5_000)]
        for w, gen in wide.items() if now >= WIDE_FROM_MS else []:
            minted[w] += [gen.next_id() for _ in range(200)]
    # Then no id repeats, each generator's ids increase and carry its worker id
    everything = [i for ids in minted.values() for i in ids]
    assert len(set(everything)) == len(everything)
    for w, ids in minted.items():
        assert ids == sorted(ids)
        assert {decompose(i)[1] for i in ids} == {w}
    # and the narrow ones' ids lie on both sides of it, sharing milliseconds with the wide ones
    narrow_ms = {decompose(i)[0] for i in minted[1]}
    assert min(narrow_ms) < WIDE_FROM_MS < max(narrow_ms)
    assert WIDE_FROM_MS in narrow_ms & {decompose(i)[0] for i in minted[64]}


@pytest.mark.parametrize("raw", ["", "abc", "-1", "0", "1" * 20, "9223372036854775808", "١٢٣"])
def test_parse_id_rejects_what_cannot_be_a_snowflake(raw):
    assert parse_id(raw) is None


def test_parse_id_accepts_decimal_strings():
    assert parse_id("7262946581234567168") == 7262946581234567168


class MemoryLeases:
    """``WorkerLeases`` in memory, deciding each write as the table's conditions do; counts
    the calls, as round trips."""

    def __init__(self) -> None:
        self.items: dict[int, tuple[str, int]] = {}  # worker -> (holder, until_ms)
        self.calls: list[str] = []

    def claim(self, worker_id: int, holder: str, now_ms: int, until_ms: int) -> bool:
        self.calls.append("claim")
        if worker_id in self.items and self.items[worker_id][1] >= now_ms:
            return False
        self.items[worker_id] = (holder, until_ms)
        return True

    def renew(self, worker_id: int, holder: str, until_ms: int) -> bool:
        self.calls.append("renew")
        if self.items.get(worker_id, ("", 0))[0] != holder:
            return False
        self.items[worker_id] = (holder, until_ms)
        return True

    def release(self, worker_id: int, holder: str, last_ms: int) -> None:
        self.renew(worker_id, holder, last_ms)

    def held(self, now_ms: int) -> set[int]:
        self.calls.append("held")
        return {n for n, (_, until) in self.items.items() if until >= now_ms}


@pytest.fixture
def seeded() -> Iterator[None]:
    """The claims' random picks, the same at every run."""
    state = random.getstate()
    random.seed(42)
    yield
    random.setstate(state)


def test_a_lease_is_claimed_once_and_renewed_only_after_a_third_of_it():
    leases, clock = MemoryLeases(), [EPOCH_MS]
    gen = Snowflake(LeasedWorker(leases, lease_ms=3_000), clock=lambda: clock[0])
    gen.next_id()
    clock[0] += 999
    gen.next_id()
    assert leases.calls == ["claim"]  # the cold start's one write; none on the warm path
    clock[0] += 1
    gen.next_id()
    assert leases.calls == ["claim", "renew"]


@pytest.mark.parametrize(("at", "space"), [(EPOCH_MS, 1024), (WIDE_FROM_MS, WORKERS)])
def test_a_full_table_is_refused_after_the_tries_and_one_read(at, space):
    leases = MemoryLeases()
    leases.items = {n: ("live", at + 60_000) for n in range(space)}
    with pytest.raises(WorkerIdExhausted):
        LeasedWorker(leases).current(at)
    assert leases.calls == ["claim"] * CLAIM_TRIES + ["held"]


def test_a_missed_claim_takes_a_free_id_after_one_read():
    leases = MemoryLeases()
    leases.items = {n: ("live", EPOCH_MS + 60_000) for n in range(1024) if n != 9}
    worker, _ = LeasedWorker(leases).current(EPOCH_MS)
    assert worker == 9 and leases.calls[-2:] == ["held", "claim"]


def test_a_cold_start_at_half_occupancy_costs_a_few_writes_and_rarely_a_read(seeded):
    # Given half the 65,536 worker ids held by live containers
    leases = MemoryLeases()
    taken = random.sample(range(WORKERS), WORKERS // 2)
    leases.items = {n: ("live", WIDE_FROM_MS + 60_000) for n in taken}
    # When 1,000 containers start one after another
    costs = []
    for _ in range(1_000):
        leases.calls = []
        LeasedWorker(leases).current(WIDE_FROM_MS)
        costs.append(leases.calls)
    # Then a start costs two writes on average, and about one in 256 reads the held ids (a
    # Scan of every lease) after its tries missed
    assert sum(len(calls) for calls in costs) / len(costs) < 2.3
    reads = [calls for calls in costs if "held" in calls]
    assert len(reads) <= 10
    assert all(calls.index("held") == CLAIM_TRIES for calls in reads)


def test_an_id_above_1023_is_never_claimed_before_the_cutover():
    # Given every id of the narrow layout held, a millisecond before the cutover
    leases = MemoryLeases()
    leases.items = {n: ("live", WIDE_FROM_MS + 60_000) for n in range(1024)}
    # When a container starts then, it is refused, though 64,512 ids are free
    with pytest.raises(WorkerIdExhausted):
        Snowflake(LeasedWorker(leases), clock=lambda: WIDE_FROM_MS - 1).next_id()
    # Then one starting at the cutover holds one of those, and mints from it on
    at, worker, _ = decompose(Snowflake(LeasedWorker(leases), clock=lambda: WIDE_FROM_MS).next_id())
    assert worker >= 1024 and at >= WIDE_FROM_MS


def test_a_wide_worker_whose_clock_steps_back_before_the_cutover_mints_after_it():
    clock = [WIDE_FROM_MS + 5]
    gen = Snowflake(FixedWorker(40_000), clock=lambda: clock[0])
    ids = [gen.next_id()]
    clock[0] = WIDE_FROM_MS - 1_000  # NTP step backwards, across the cutover
    ids += [gen.next_id() for _ in range(200)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(decompose(i)[0] >= WIDE_FROM_MS and decompose(i)[1] == 40_000 for i in ids)


def test_a_burst_ahead_of_the_clock_stays_inside_its_lease_and_its_release():
    # Given a holder of a 3-second lease whose clock stands still while it mints 4 seconds'
    # worth of ids (64 a millisecond: the sequence borrows milliseconds ahead of the clock)
    leases = MemoryLeases()
    holder = LeasedWorker(leases, lease_ms=3_000)
    gen = Snowflake(holder, clock=lambda: WIDE_FROM_MS)
    for _ in range(64 * 4_000):
        at, worker, _ = decompose(gen.next_id())
        # Then the lease as written ends above every timestamp used (a claimant's clock must
        # pass that end), renewed as the timestamps run ahead
        assert at < leases.items[worker][1]
    assert at == WIDE_FROM_MS + 3_999 and "renew" in leases.calls
    # and its release ends the lease no earlier than the last timestamp used
    holder.release()
    assert leases.items[worker][1] >= at
