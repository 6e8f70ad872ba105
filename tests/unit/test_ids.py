"""Snowflake layout, ordering and clock-skew behaviour (no network)."""

from __future__ import annotations

import pytest
from warble.ids import (
    EPOCH_MS,
    MAX_SEQUENCE,
    FixedWorker,
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
