"""The stack the faults are done to: `python -m infra.local serve` on free ports, with stores of
its own, so pausing, emptying or killing them harms no other stack on the machine.

- its own `redis-server` (or a local Redis Cluster of three primaries, each with a replica);
- its own PostgreSQL database (`warble_chaos`), reached through a TCP proxy the harness cuts
  (the machine's PostgreSQL itself is never stopped);
- a small seeded population (`infra.local seed --small`) whose manifest the load's users read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.local_stack import Served, start_serve, stop_serve
from tests.support.redis_cluster import LocalCluster, start_cluster
from tests.support.redis_server import RedisServer
from tests.support.tcp_proxy import TcpProxy

ROOT = Path(__file__).resolve().parents[2]
DB_NAME = os.environ.get("WARBLE_CHAOS_DB", "warble_chaos")
# Clusters from here up (nodes and their bus ports, +10000): clear of the test suite's.
CLUSTER_FIRST_PORT = int(os.environ.get("WARBLE_CHAOS_CLUSTER_PORT", "7400"))
UNLIMITED = "1000000"


@dataclass
class ChaosStack:
    served: Served
    directory: Path
    env_file: Path
    stack_name: str
    proxy: TcpProxy
    redis: RedisServer | None = None
    cluster: LocalCluster | None = None
    manifest: Path = field(default_factory=Path)
    scratch: dict[str, Any] = field(default_factory=dict)  # a fault's own state, inject to check

    @property
    def http(self) -> str:
        return self.served.http

    @property
    def moto(self) -> str:
        return self.served.moto

    def seed(self) -> None:
        """A small population (30 users, their follows, tweets, likes, conversations)."""
        self.manifest = self.directory / "population.json"
        command = [sys.executable, "-m", "infra.local", "seed", "--small", "--quiet",
                   "--endpoint-url", self.moto, "--stack-name", self.stack_name,
                   "--env-vars", str(self.env_file), "--manifest", str(self.manifest)]  # fmt: skip
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True, timeout=600)

    def warm(self) -> None:
        """A login and a home page, so the first users do not each meet a cold worker."""
        import httpx

        people = json.loads(self.manifest.read_text())
        body = {"login": people["users"][0]["username"], "password": people["password"]}
        with httpx.Client(base_url=self.http, timeout=120) as api:
            token = api.post("/v1/auth/login", json=body).raise_for_status().json()["token"]
            api.get("/v1/timeline/home", headers={"Authorization": f"Bearer {token}"})

    def environment(self) -> dict[str, str]:
        """The stack's settings (table names, moto), as bench.load.check reads its tables."""
        import argparse

        from infra.local.stack_environment import stack_environment

        return stack_environment(argparse.Namespace(
            template="template.yaml", stack_name=self.stack_name, region="us-east-1",
            env_vars=str(self.env_file), endpoint_url=self.moto,
        ))  # fmt: skip

    def close(self) -> None:
        try:
            stop_serve(self.served, timeout=120)
        finally:
            # The handlers' logs, to read what a scenario's odd answers were.
            (self.directory / "serve.log").write_text("".join(self.served.output))
            self.proxy.cut()
            if self.redis is not None:
                self.redis.stop()
            if self.cluster is not None:
                self.cluster.stop()


def start(cluster: bool = False) -> ChaosStack:
    """Stores first (a Redis or a cluster, the proxy), then serve pointed at them, then a seed."""
    directory = Path(tempfile.mkdtemp(prefix="warble-chaos-"))
    proxy = TcpProxy(("127.0.0.1", 5432))
    proxy.restore()
    redis: RedisServer | None = None
    nodes: LocalCluster | None = None
    try:
        if cluster:
            nodes = start_cluster(CLUSTER_FIRST_PORT, replicas=1)
            redis_url = nodes.url
        else:
            redis = RedisServer()
            redis.start()
            redis_url = redis.url
        parameters: dict[str, Any] = {
            "DB_NAME": DB_NAME, "DB_PORT": str(proxy.port), "DB_SSLMODE": "disable",
            "REDIS_URL": redis_url, "REDIS_CLUSTER": "true" if cluster else "false",
            "PASSWORD_HASH_ROUNDS": "4", "ADMIN_USERNAMES": "warble_admin",
            **{f"RATE_LIMIT_{name}_REQUESTS": UNLIMITED
               for name in ("USER", "SIGNUP_IP", "LOGIN_IP", "AUTH_FAILURES_IP")},
        }  # fmt: skip
        env_file = directory / "env.json"
        stack_name = f"warble-chaos-{uuid.uuid4().hex[:6]}"
        served = start_serve(
            env_file,
            {"Parameters": parameters},
            extra_args=["--stack-name", stack_name, "--web-port", "-1", "--no-schedules"],
            drop_env_prefixes=("AWS_", "DB_", "REDIS_"),
            timeout=300,
        )
    except BaseException:
        proxy.cut()
        for store in (redis, nodes):
            if store is not None:
                store.stop()
        raise
    stack = ChaosStack(served, directory, env_file, stack_name, proxy, redis, nodes)
    try:
        stack.seed()
        stack.warm()
    except BaseException:
        stack.close()
        raise
    (directory / "stack.json").write_text(json.dumps({"http": stack.http, "moto": stack.moto}))
    return stack
