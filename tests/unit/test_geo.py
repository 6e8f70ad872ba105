"""Discover's cells: geohash names, and a radius covering every cell a point within it is in."""

from __future__ import annotations

import math
import random

import pytest
from warble.domain.discover.geo import cell_of, cells_covering, distance_km

pytestmark = pytest.mark.unit


def test_cells_are_geohash_precision_3():
    assert cell_of(57.64911, 10.40744) == "u4p"  # geohash.org's example, u4pruydqqvj
    assert cell_of(-33.8688, 151.2093) == "r3g"  # Sydney
    assert cell_of(48.8566, 2.3522) == "u09"  # Paris


@pytest.mark.parametrize(
    ("lat", "lon", "km"),
    [(48.8566, 2.3522, 10), (0.5, 179.95, 80), (-0.3, -179.9, 30), (84.9, 10, 300),
     (-89.5, 0, 50), (60.2, 24.9, 500), (12.0, 45.0, 0.1)],
)  # fmt: skip
def test_a_radius_covers_every_cell_of_every_point_within_it(lat, lon, km):
    rng = random.Random(f"{lat},{lon},{km}")
    covered = set(cells_covering(lat, lon, km))
    for _ in range(3000):
        bearing, reach = rng.uniform(0, 2 * math.pi), km * math.sqrt(rng.random())
        d = reach / 6372.797560856
        p1, l1 = math.radians(lat), math.radians(lon)
        p2 = math.asin(math.sin(p1) * math.cos(d) + math.cos(p1) * math.sin(d) * math.cos(bearing))
        l2 = l1 + math.atan2(
            math.sin(bearing) * math.sin(d) * math.cos(p1),
            math.cos(d) - math.sin(p1) * math.sin(p2),
        )
        plat, plon = math.degrees(p2), (math.degrees(l2) + 180) % 360 - 180
        assert distance_km(lat, lon, plat, plon) <= km * 1.0001
        assert cell_of(plat, plon) in covered, (plat, plon)


def test_small_radii_read_few_cells():
    assert len(cells_covering(48.8566, 2.3522, 10)) == 1
    assert len(cells_covering(0.0, 179.99, 10)) == 4  # four cells meet at the antimeridian
