"""warble.dal.hot: what a container holds, for how long, and the counts read from it."""

from __future__ import annotations

from warble.dal.hot import MISSING, HotCache, count_above, hot_cache


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_value_is_held_for_its_window_then_read_again() -> None:
    clock = Clock()
    hot = HotCache(1.0, clock)
    assert hot.get("k") is MISSING
    hot.put("k", ["0", "a"])
    clock.now += 0.999
    assert hot.get("k") == ["0", "a"]
    clock.now += 0.001
    assert hot.get("k") is MISSING
    hot.put("k", ["0"])
    hot.drop("k")
    assert hot.get("k") is MISSING


def test_off_when_the_setting_is_zero() -> None:
    assert hot_cache(0) is None
    assert isinstance(hot_cache(1000), HotCache)


def test_counts_above_a_bound_as_zlexcount_does() -> None:
    members = ["0", "0000000000000000005:1", "0000000000000000007:2", "0000000000000000009:1"]
    # "(<pos>;" excludes the entry at the position itself (its "<id>:" sorts below "<id>;")
    assert count_above(members, "0000000000000000007;") == 1
    assert count_above(members, "0000000000000000004;") == 3
    assert count_above(["0", "0000000000000000003", "0000000000000000008"],
                       "0000000000000000003") == 1  # fmt: skip
    assert count_above([], "0") == 0
