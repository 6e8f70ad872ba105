"""A throwaway 3-node Redis Cluster for the tests: three ``redis-server --cluster-enabled yes``
processes joined by ``redis-cli --cluster create``, each primary holding a third of the slots.
And single-node clusters, each holding every slot: the separate caches of one keyspace
(``start_caches``).

Nodes keep nothing on disk (their cluster config lives in a temporary directory removed on
stop). Each node needs two ports, its own and its cluster bus port (own + 10000); the caller
names the first port to try and the search moves up past any taken one, so two checkouts (or
two pytest-xdist workers) on one machine can each run their own cluster.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis
from redis.cluster import RedisCluster

NODES = 3
BUS_OFFSET = 10_000


@dataclass
class LocalCluster:
    ports: list[int]
    directory: Path
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The seed node's URL: the cluster client discovers the others from it."""
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def client(self, **options: object) -> RedisCluster:
        return RedisCluster(host="127.0.0.1", port=self.ports[0], **options)  # type: ignore[arg-type]

    def nodes(self) -> list[redis.Redis]:
        """A plain client per node (for per-node commands: SCRIPT FLUSH, INFO, ...)."""
        return [redis.Redis(host="127.0.0.1", port=port) for port in self.ports]

    def kill_primary(self) -> int:
        """SIGKILL a primary other than the seed node (clients keep their seed); its port."""
        with redis.Redis(port=self.ports[0]) as seed:
            nodes = seed.cluster("nodes")
        victim = next(
            int(address.split("@")[0].rsplit(":", 1)[1])
            for address, node in nodes.items()
            if "master" in node["flags"]
            and int(address.split("@")[0].rsplit(":", 1)[1]) != self.ports[0]
        )
        process = self.processes[self.ports.index(victim)]
        process.kill()
        process.wait()
        return victim

    def wait_for_primaries(self, timeout: float = 60) -> None:
        """Until the seed node sees three live primaries and the state ``ok`` (a killed
        primary's replica promoted)."""

        def promoted() -> bool:
            with redis.Redis(port=self.ports[0], socket_timeout=1) as seed:
                nodes = seed.cluster("nodes").values()
                live = [n for n in nodes if "master" in n["flags"] and "fail" not in n["flags"]]
                return len(live) == NODES and seed.cluster("info")["cluster_state"] == "ok"

        _wait(promoted, "no replica took over", timeout)

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


def _free(port: int) -> bool:
    for candidate in (port, port + BUS_OFFSET):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", candidate))
            except OSError:
                return False
    return True


def _pick_ports(first: int, limit: int, count: int = NODES) -> list[int]:
    ports: list[int] = []
    port = first
    while len(ports) < count:
        if port >= first + limit:
            raise RuntimeError(f"no {count} free Redis ports (and bus ports) in {first}..{port}")
        if _free(port):
            ports.append(port)
        port += 1
    return ports


def _wait(predicate: object, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            if predicate():  # type: ignore[operator]
                return
        except redis.RedisError as exc:
            last = exc
        time.sleep(0.1)
    raise RuntimeError(f"Redis Cluster: {what} within {timeout} s (last error: {last})")


def _start_nodes(cluster: LocalCluster, ports: list[int], timeout: float) -> None:
    """A cluster-enabled redis-server on each of ``ports`` (no slots yet), answering."""
    for port in ports:
        options = {
            "port": str(port),
            "bind": "127.0.0.1",
            "cluster-enabled": "yes",
            "cluster-config-file": f"nodes-{port}.conf",
            "cluster-node-timeout": "5000",
            "save": "",
            "appendonly": "no",
            "dir": str(cluster.directory),
            "logfile": str(cluster.directory / f"{port}.log"),
        }
        command = ["redis-server"]
        for name, value in options.items():
            command += [f"--{name}", value]
        cluster.processes.append(
            subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
    for port in ports:
        node = redis.Redis(host="127.0.0.1", port=port)
        _wait(node.ping, "a node did not answer", timeout)
        node.close()


def _tools() -> None:
    for tool in ("redis-server", "redis-cli"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"{tool} is not installed (scripts/bootstrap.sh installs it)")


def start_caches(
    first_port: int, count: int, search: int = 100, timeout: float = 30
) -> list[LocalCluster]:
    """``count`` single-node clusters, each holding all 16384 slots (CLUSTER ADDSLOTSRANGE),
    on the first free ports from ``first_port``: separate caches, as several ElastiCache
    clusters are."""
    _tools()
    ports = _pick_ports(first_port, search, count)
    caches: list[LocalCluster] = []
    try:
        for port in ports:
            cache = LocalCluster([port], Path(tempfile.mkdtemp(prefix="warble-cache-")))
            caches.append(cache)
            _start_nodes(cache, [port], timeout)
            node = cache.nodes()[0]
            node.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
            _wait(
                lambda node=node: node.cluster("info")["cluster_state"] == "ok",
                "the cache did not reach state ok",
                timeout,
            )
            node.close()
    except BaseException:
        for cache in caches:
            cache.stop()
        raise
    return caches


def start_node(first_port: int, search: int = 100, timeout: float = 30) -> LocalCluster:
    """One cluster-enabled node holding no slot, on the first free port from ``first_port``."""
    _tools()
    node = LocalCluster(
        _pick_ports(first_port, search, 1), Path(tempfile.mkdtemp(prefix="warble-node-"))
    )
    try:
        _start_nodes(node, node.ports, timeout)
    except BaseException:
        node.stop()
        raise
    return node


def start_cluster(
    first_port: int, search: int = 100, timeout: float = 30, replicas: int = 0
) -> LocalCluster:
    """Start three primaries (and ``replicas`` replicas of each) on the first free ports from
    ``first_port`` and form the cluster."""
    _tools()
    ports = _pick_ports(first_port, search, NODES * (1 + replicas))
    cluster = LocalCluster(ports, Path(tempfile.mkdtemp(prefix="warble-cluster-")))
    try:
        _start_nodes(cluster, ports, timeout)
        subprocess.run(
            ["redis-cli", "--cluster", "create"]
            + [f"127.0.0.1:{port}" for port in ports]
            + ["--cluster-replicas", str(replicas), "--cluster-yes"],
            check=True,
            capture_output=True,
            timeout=timeout,
        )
        for node in cluster.nodes():
            _wait(
                lambda node=node: node.cluster("info")["cluster_state"] == "ok",
                "the cluster did not reach state ok",
                timeout,
            )
    except BaseException:
        cluster.stop()
        raise
    return cluster
