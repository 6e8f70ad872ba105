"""Snowflake layout, ordering and clock-skew behaviour (no network)."""

from __future__ import annotations

import pytest
from warble.errors import WorkerIdExhausted
from warble.ids import (
    EPOCH_MS,
    MAX_SEQUENCE,
    WORKERS,
    FixedWorker,
    LeasedWorker,
    Snowflake,
    compose,
    decompose,
    parse_id,
)

pytestmark = pytest.mark.unit


def test_layout_is_41_10_12_bits():
    value = compose(EPOCH_MS + 5, 1023, 4095)
    assert value == (5 << 22) | (1023 << 12) | 4095
    assert decompose(value) == (EPOCH_MS + 5, 1023, 4095)


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


def test_exhausted_sequence_borrows_the_next_millisecond():
    gen = Snowflake(FixedWorker(1), clock=lambda: EPOCH_MS + 7)
    ids = [gen.next_id() for _ in range(MAX_SEQUENCE + 3)]
    assert len(set(ids)) == len(ids) and ids == sorted(ids)
    assert decompose(ids[-1])[0] == EPOCH_MS + 8


def test_ids_fit_a_signed_64_bit_integer_for_69_years():
    assert compose(EPOCH_MS + (1 << 41) - 1, 1023, 4095) < (1 << 63)


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


def test_a_full_table_is_refused_in_two_round_trips_not_1024():
    leases = MemoryLeases()
    leases.items = {n: ("live", EPOCH_MS + 60_000) for n in range(WORKERS)}
    with pytest.raises(WorkerIdExhausted):
        LeasedWorker(leases).current(EPOCH_MS)
    assert leases.calls == ["claim", "held"]


def test_a_missed_claim_takes_a_free_id_after_one_read():
    leases = MemoryLeases()
    leases.items = {n: ("live", EPOCH_MS + 60_000) for n in range(WORKERS) if n != 9}
    worker, _ = LeasedWorker(leases).current(EPOCH_MS)
    assert worker == 9 and len(leases.calls) <= 3  # a missed claim, the read, the claim
