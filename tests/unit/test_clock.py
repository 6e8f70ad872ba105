"""API.md's RFC 3339 timestamps: the integer path a page renders with gives the datetime
path's text."""

from __future__ import annotations

import random

from warble import clock


def test_rfc3339_ms_is_rfc3339_of_from_ms():
    rng = random.Random(20)
    moments = [0, 999, 1000, 1_288_834_974_657, 1_795_616_055_663, 4_102_444_799_999]
    moments += [rng.randrange(0, 4_102_444_800_000) for _ in range(2000)]
    for ms in moments:
        assert clock.rfc3339_ms(ms) == clock.rfc3339(clock.from_ms(ms)), ms
    assert clock.rfc3339_ms(1_795_616_055_063) == "2026-11-25T14:14:15.063Z"
