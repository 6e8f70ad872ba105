"""PostgreSQL's bytes per account, measured (the capacity model's ``AURORA_BYTES_PER_ACCOUNT``).

Signs ``--users`` accounts up through the accounts service on a freshly migrated database of its
own, logs each in ``--sessions`` times more (an account's other devices), and divides the growth
of every table and index (``pg_total_relation_size``: heap, indexes, TOAST) by the accounts.

    python -m bench.postgres_bytes [--users 2000] [--sessions 2]
"""

from __future__ import annotations

import argparse
import json
import os

_SIZE = """
SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
"""
_TABLES = """
SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema')
ORDER BY 2 DESC LIMIT 5
"""


def measure(users: int, sessions: int) -> dict[str, object]:
    os.environ.setdefault("WARBLE_BENCH_DB", "warble_pgbytes")
    from bench import stack

    stack.ENV["PASSWORD_HASH_ROUNDS"] = "4"  # the hash's length is the same at any cost
    running = stack.start()  # a migrated database of its own, moto (the id leases), Redis
    from warble import services

    from infra.local.database import drop_database

    accounts, database = services.accounts(), services.container().database

    def size() -> int:
        with database.connection() as conn:
            conn.execute("VACUUM ANALYZE")
            return int(conn.execute(_SIZE).fetchone()["bytes"])

    before = size()
    for i in range(users):
        name = f"pgbytes{i:06d}"
        accounts.signup(name, f"{name}@example.com", "password1", None, "A bio of a few words.")
        for _ in range(sessions):
            accounts.login(name, "password1", "bench")
    after = size()
    with database.connection() as conn:
        largest = {row["name"]: int(row["bytes"]) for row in conn.execute(_TABLES)}
    running.close()
    drop_database(stack.BENCH_DB)
    return {
        "accounts": users,
        "sessions_per_account": 1 + sessions,
        "bytes_per_account": (after - before) / users,
        "largest_tables_bytes": largest,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument("--sessions", type=int, default=2)
    args = parser.parse_args()
    print(json.dumps(measure(args.users, args.sessions), indent=1))


if __name__ == "__main__":
    main()
