"""Seed data for Discover: N users placed at random around a point, with a progress bar.

    python -m infra.local.seed_nearby --count 1000 --lat 48.8566 --lon 2.3522 --radius-km 10

against a running local stack (``make run``: moto at :5005, the database and Redis of
infra/local/env.json). Each user is a real account (``nb<id in base 36>``, password
``password1``, one shared bcrypt hash so seeding is fast) with a durable location and an entry
in its geo cell, exactly as ``PUT /v1/users/me/location`` leaves them. The benchmark calls
``seed`` directly.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "password1"
BATCH = 500


def progress(done: int, total: int, started: float, out: TextIO = sys.stderr) -> None:
    width = 40
    filled = width * done // max(total, 1)
    rate = done / max(time.monotonic() - started, 1e-9)
    out.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} ({rate:,.0f}/s)")
    if done >= total:
        out.write("\n")
    out.flush()


def _base36(value: int) -> str:
    digits = ""
    while value:
        value, rest = divmod(value, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[rest] + digits
    return digits or "0"


def around(lat: float, lon: float, km: float, rng: random.Random) -> tuple[float, float]:
    """A uniformly random point of the disc of ``km`` around (lat, lon)."""
    r = km * math.sqrt(rng.random()) / 111.195
    angle = rng.random() * 2 * math.pi
    new_lat = max(-90.0, min(90.0, lat + r * math.sin(angle)))
    new_lon = lon + r * math.cos(angle) / max(0.01, math.cos(math.radians(lat)))
    return new_lat, (new_lon + 180) % 360 - 180


def seed(
    count: int,
    lat: float,
    lon: float,
    radius_km: float,
    *,
    prefix: str = "nb",
    seed_value: int = 0,
    show_progress: bool = True,
) -> list[int]:
    """Create ``count`` located users around the point; their ids."""
    from warble import services
    from warble.dal.accounts import UserRepository
    from warble.security import hash_password

    container = services.container()
    users = UserRepository(container.database)
    password_hash = hash_password(PASSWORD, 4)
    rng = random.Random(seed_value)
    ids: list[int] = []
    started = time.monotonic()
    for start in range(0, count, BATCH):
        placed = []
        for _ in range(min(BATCH, count - start)):
            uid = container.ids.next_id()
            name = f"{prefix[:2]}{_base36(uid)}"  # 15 characters at most, unique as the id
            users.insert(uid, name, f"{name}@example.com", password_hash, name)
            placed.append((uid, *around(lat, lon, radius_km, rng)))
            ids.append(uid)
        container.discover.place_many(placed)
        if show_progress:
            progress(len(ids), count, started)
    return ids


def _local_environment(stack_name: str, endpoint_url: str, env_file: Path) -> None:
    """The settings the stack's functions run with (every table, moto, database, Redis), read
    from template.yaml as the population generator reads them: no hand list to fall behind."""
    from infra.local.stack_environment import stack_environment

    stack = argparse.Namespace(
        template=ROOT / "template.yaml",
        stack_name=stack_name,
        region=os.environ.get("AWS_REGION", "us-east-1"),
        endpoint_url=endpoint_url,
        env_vars=env_file,
    )
    for name, value in stack_environment(stack).items():
        os.environ.setdefault(name, value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.local.seed_nearby", description=__doc__)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--lat", type=float, required=True)
    parser.add_argument("--lon", type=float, required=True)
    parser.add_argument("--radius-km", type=float, default=10.0)
    parser.add_argument("--prefix", default="nb", help="usernames: <2 letters><id in base 36>")
    parser.add_argument("--stack-name", default="warble-local")
    parser.add_argument("--endpoint-url", default="http://127.0.0.1:5005", help="moto server")
    parser.add_argument("--env-vars", type=Path, default=ROOT / "infra/local/env.json")
    args = parser.parse_args(argv)
    _local_environment(args.stack_name, args.endpoint_url, args.env_vars)
    ids = seed(args.count, args.lat, args.lon, args.radius_km, prefix=args.prefix)
    print(json.dumps({"seeded": len(ids), "first": str(ids[0]) if ids else None}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
