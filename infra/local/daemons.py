"""PostgreSQL and Redis on this machine: check that they answer, start them if they do not.

They stand in for Aurora (behind RDS Proxy) and ElastiCache. `ensure_services` is what `serve`
runs before migrating; the start commands are the documented ones for this machine's defaults.
"""

from __future__ import annotations

import logging
import subprocess
import time
from pathlib import Path

from infra.local.errors import ServiceUnavailableError

__all__ = ["ensure_services"]

log = logging.getLogger(__name__)

_DEFAULT_PORTS = {"PostgreSQL": 5432, "Redis": 6379}
_PG_START = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
_REDIS_START = (
    'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no '
    "--dir /var/lib/redis --logfile /var/log/redis/ci.log"
)


def _postgres_answers(host: str, port: int, user: str) -> str | None:
    """None when PostgreSQL answers a query, else the reason it does not."""
    import psycopg

    try:
        with psycopg.connect(
            host=host, port=port, user=user, dbname="postgres", connect_timeout=2
        ) as connection:
            connection.execute("SELECT 1")
        return None
    except psycopg.Error as exc:
        return str(exc).strip() or type(exc).__name__


def _redis_answers(host: str, port: int) -> str | None:
    """None when Redis answers PING, else the reason it does not."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    # No client-side retries: a dead port must be reported at once, not after back-off.
    client = redis.Redis(
        host=host,
        port=port,
        socket_connect_timeout=2,
        socket_timeout=2,
        retry=Retry(NoBackoff(), 0),
    )
    try:
        client.ping()
        return None
    except redis.RedisError as exc:
        return str(exc) or type(exc).__name__
    finally:
        client.close()


def _run_start_command(command: str) -> str:
    try:
        completed = subprocess.run(
            command, shell=True, capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{command!r} failed: {exc}"
    output = (completed.stdout + completed.stderr).strip()
    return f"{command!r} exited {completed.returncode}" + (f": {output}" if output else "")


def ensure_services(
    *,
    pg_host: str = "127.0.0.1",
    pg_port: int = 5432,
    pg_user: str = "postgres",
    redis_host: str = "127.0.0.1",
    redis_port: int = 6379,
    start: bool = True,
    timeout: float = 30.0,
) -> None:
    """Make sure PostgreSQL and Redis answer; start them with the documented commands if not.

    The start commands only know this machine and the default ports, so they are tried only
    for a local host on 5432 / 6379.
    Raises ServiceUnavailableError naming what failed and what was tried.
    """
    checks = [
        ("PostgreSQL", lambda: _postgres_answers(pg_host, pg_port, pg_user), pg_host, pg_port),
        ("Redis", lambda: _redis_answers(redis_host, redis_port), redis_host, redis_port),
    ]
    problems: dict[str, str] = {}
    for name, check, host, port in checks:
        command = _PG_START if name == "PostgreSQL" else _REDIS_START
        startable = port == _DEFAULT_PORTS[name] and host in ("127.0.0.1", "localhost", "::1")
        reason = check()
        if reason is None:
            continue
        attempts = [f"{name} does not answer: {reason}"]
        if start and startable:
            if name == "Redis":
                for directory in ("/var/lib/redis", "/var/log/redis"):
                    try:
                        Path(directory).mkdir(parents=True, exist_ok=True)
                    except OSError as exc:
                        attempts.append(f"cannot create {directory}: {exc}")
            attempts.append(_run_start_command(command))
            deadline = time.monotonic() + timeout
            while reason is not None and time.monotonic() < deadline:
                time.sleep(0.25)
                reason = check()
            if reason is None:
                log.info("started %s", name)
                continue
            attempts.append(f"still not answering after {timeout:.0f} s: {reason}")
        elif start:
            attempts.append("not started: the start command only serves the local default port")
        problems[name] = "; ".join(attempts)
    if problems:
        raise ServiceUnavailableError(
            "local services unavailable: " + " | ".join(problems.values())
        )
