"""Discover's cells: geohash names, and a radius covering every cell a point within it is in."""

from __future__ import annotations

import math
import random

import pytest
from warble.domain.discover.geo import cell_of, cells_covering, distance_km, snap, whole_km

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


def _random_point(rng: random.Random, max_lat: float = 85.0) -> tuple[float, float]:
    return rng.uniform(-max_lat, max_lat), rng.uniform(-180, 180)


def test_the_privacy_grid_moves_a_point_at_most_half_a_cell_diagonal():
    rng = random.Random(33)
    for _ in range(20_000):
        lat, lon = _random_point(rng)
        shown = snap(lat, lon)
        assert distance_km(lat, lon, *shown) <= 0.72, (lat, lon)
        assert snap(*shown) == shown  # a cell's centre is in its cell


def test_points_of_one_cell_are_shown_at_one_place_and_told_one_distance():
    """Moving within one's cell changes no answer (API.md): whatever the viewer's position."""
    rng = random.Random(34)
    for _ in range(500):
        centre = snap(*_random_point(rng))
        viewer = _random_point(rng)
        for _ in range(5):  # places of the cell around its centre (up to 300 m off)
            lat = centre[0] + rng.uniform(-0.0027, 0.0027)
            lon = centre[1] + rng.uniform(-0.0027, 0.0027) / max(0.05, math.cos(math.radians(lat)))
            if snap(lat, lon) == centre:
                assert whole_km(distance_km(*viewer, *snap(lat, lon))) == whole_km(
                    distance_km(*viewer, *centre)
                )


def test_told_distances_are_whole_km_at_least_one_and_within_1_5_km_of_the_truth():
    rng = random.Random(35)
    for _ in range(20_000):
        viewer = _random_point(rng)
        target = (viewer[0] + rng.uniform(-0.2, 0.2), viewer[1] + rng.uniform(-0.2, 0.2))
        told = whole_km(distance_km(*viewer, *snap(*target)))
        true = distance_km(*viewer, *target)
        assert isinstance(told, int) and told >= 1
        assert abs(told - true) <= 1.5, (viewer, target, told, true)
