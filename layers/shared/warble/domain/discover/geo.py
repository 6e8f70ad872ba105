"""Cells of the Discover geo index: which cell a point is in, and which cells a radius covers;
and the privacy grid: where a located person is shown to be, and how far away they are said to
be.

The index is split by cell so that a Redis Cluster spreads it over its nodes and a query reads
only the cells its circle can reach (``warble.dal.discover``). A cell is a geohash of precision 3:
1.40625 degrees square (about 156 km at the equator, narrower in longitude towards the poles),
named by its three geohash characters. That size keeps a 10 km query to 1 to 4 cells and the
API's largest radius (500 km) to a few dozen, read in one pipeline. A denser world would want
smaller cells where people are (seed 003's S2 boxes); the cell name is the only thing that would
change.
"""

from __future__ import annotations

import math

EARTH_RADIUS_KM = 6372.797560856  # the radius Redis' GEO commands use
KM_PER_DEGREE = EARTH_RADIUS_KM * math.pi / 180
CELL_DEGREES = 360 / 256  # geohash precision 3: 8 longitude bits, 7 latitude bits
LON_CELLS = 256
LAT_CELLS = 128
_BASE32 = "0123456789bcdefghjkmnpqrstuvwxyz"


def _geohash(row: int, col: int) -> str:
    """The 3-character geohash of cell (row, col): bits interleaved, longitude first."""
    bits = 0
    for i in range(15):
        # Longitude bits at even positions, latitude at odd, most significant first.
        bit = (col >> (7 - i // 2)) & 1 if i % 2 == 0 else (row >> (6 - i // 2)) & 1
        bits = (bits << 1) | bit
    return "".join(_BASE32[(bits >> shift) & 31] for shift in (10, 5, 0))


def _row(lat: float) -> int:
    return min(LAT_CELLS - 1, max(0, int((lat + 90) / CELL_DEGREES)))


def _col(lon: float) -> int:
    return math.floor((lon + 180) / CELL_DEGREES) % LON_CELLS


def cell_of(lat: float, lon: float) -> str:
    return _geohash(_row(lat), _col(lon))


def cells_covering(lat: float, lon: float, radius_km: float) -> list[str]:
    """Every cell that a circle of ``radius_km`` around the point can touch (a superset: the
    circle's bounding box), nearest rows first is not promised; callers merge by distance."""
    dlat = math.degrees(radius_km / EARTH_RADIUS_KM)
    south, north = lat - dlat, lat + dlat
    rows = range(_row(max(-90.0, south)), _row(min(90.0, north)) + 1)
    widest = max(abs(south), abs(north))
    if north >= 90 or south <= -90 or widest >= 89.9:
        cols: list[int] = list(range(LON_CELLS))  # a pole inside: every longitude
    else:
        # The box's half-width in longitude at its widest latitude (conservative).
        dlon = dlat / math.cos(math.radians(widest))
        if dlon >= 180:
            cols = list(range(LON_CELLS))
        else:
            first = math.floor((lon - dlon + 180) / CELL_DEGREES)
            last = math.floor((lon + dlon + 180) / CELL_DEGREES)
            cols = list(dict.fromkeys(c % LON_CELLS for c in range(first, last + 1)))
    return [_geohash(row, col) for row in rows for col in cols]


def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle (haversine) distance, as Redis computes it."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))


# ---- the privacy grid (API.md: nobody's position is revealed closer than about a kilometre) --
# Rows of GRID_KM of latitude; each row cut into as many columns as fit GRID_KM wide at its
# middle (at least one), so every cell is about GRID_KM square, nearer the poles too. A person
# is indexed at the centre of their cell, and a distance is told in whole kilometres, at least
# one: measured from a viewer to that centre, it is off the true great-circle distance by at
# most the cell's half-diagonal (0.71 km) plus the rounding (0.5 km), within API.md's 1.5 km.
# Moving inside one's cell changes nothing anyone is told, and trilateration from any number
# of places ends at the cell's centre.
GRID_KM = 1.0
_GRID_LAT = GRID_KM / KM_PER_DEGREE
_GRID_ROWS = math.ceil(180 / _GRID_LAT)


def snap(lat: float, lon: float) -> tuple[float, float]:
    """The centre of the ~1 km grid cell of a point (where Discover shows that person to be)."""
    row = min(_GRID_ROWS - 1, max(0, math.floor((lat + 90) / _GRID_LAT)))
    centre_lat = min(90.0, -90 + (row + 0.5) * _GRID_LAT)
    width = 360 * math.cos(math.radians(centre_lat)) * KM_PER_DEGREE
    columns = max(1, math.floor(width / GRID_KM))
    grid_lon = 360 / columns
    column = math.floor((lon + 180) / grid_lon) % columns
    return centre_lat, -180 + (column + 0.5) * grid_lon


def whole_km(km: float) -> int:
    """A distance as Discover tells it: whole kilometres (halves up), at least one."""
    return max(1, math.floor(km + 0.5))
