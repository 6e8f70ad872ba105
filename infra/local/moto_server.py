"""The moto server the local runtime talks to in place of AWS, and boto3 clients for it.

`start_moto` runs moto in a child process (with infra/local/moto_patches.py installed) and waits
until it answers; `aws_client` is a boto3 client pointed at it with dummy credentials.
"""

from __future__ import annotations

import atexit
import collections
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

from infra.local.errors import ServiceUnavailableError

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["MotoServer", "aws_client", "start_moto"]

REPO_ROOT = Path(__file__).resolve().parents[2]

# moto accepts any credentials; fixed dummy ones keep a developer's real profile out of the way.
_DUMMY_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}

# The child runs moto's own CLI entry point, plus a watchdog thread that exits when the parent
# dies: a killed test run or gateway must not leave an orphan server holding the port.
_MOTO_BOOTSTRAP = """
import os, sys, threading, time
parent = int(sys.argv[1])
def _watch():
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.5)
threading.Thread(target=_watch, daemon=True).start()
# Atomic, isolated TransactWriteItems (infra/local/moto_patches.py explains why).
sys.path.insert(0, os.environ["WARBLE_REPO_ROOT"])
from infra.local.moto_patches import install
install()
from moto.server import main
main(sys.argv[2:])
"""


@dataclass
class MotoServer:
    """A moto server running in a child process (so it never competes for our GIL)."""

    host: str
    port: int
    process: subprocess.Popen[str]
    _output: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=200))

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def output_tail(self) -> str:
        """The last lines moto printed (request log and tracebacks), for error messages."""
        return "".join(self._output)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the server; safe to call twice."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout)

    def __enter__(self) -> MotoServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def _answers_http(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1.0):
            return True
    except urllib.error.HTTPError:
        return True  # any HTTP answer, even 404, means the server is up
    except (urllib.error.URLError, OSError):
        return False


def start_moto(
    port: int = 5005,
    host: str = "127.0.0.1",
    *,
    timeout: float = 30.0,
    extra_env: dict[str, str] | None = None,
) -> MotoServer:
    """Start `python -m moto.server` in a child process and wait until it answers.

    `port=0` picks a free port (tests use it so they never collide with a running `serve`).
    Raises ServiceUnavailableError if the port is taken or the server does not come up.
    """
    if port == 0:
        port = _free_port(host)
    elif _port_in_use(host, port):
        raise ServiceUnavailableError(
            f"port {host}:{port} is already in use; stop whatever holds it or choose another "
            "moto port"
        )
    env = dict(os.environ)
    # Werkzeug's reloader would fork a second server; moto's debug pages are not wanted either.
    env.pop("WERKZEUG_RUN_MAIN", None)
    env["MOTO_PORT"] = str(port)
    env["WARBLE_REPO_ROOT"] = str(REPO_ROOT)
    env.update(extra_env or {})
    process = subprocess.Popen(
        [sys.executable, "-c", _MOTO_BOOTSTRAP, str(os.getpid()), "-H", host, "-p", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        # Its own session: Ctrl-C in the terminal must not kill moto before `serve` has let the
        # last $disconnect handlers run (the watchdog above still ends it if we die).
        start_new_session=True,
    )
    server = MotoServer(host=host, port=port, process=process)

    def drain() -> None:
        # Keep only a tail: moto logs every request and a long `serve` must not grow memory.
        assert process.stdout is not None
        for line in process.stdout:
            server._output.append(line)

    threading.Thread(target=drain, name=f"moto-{port}-output", daemon=True).start()
    atexit.register(server.stop)

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServiceUnavailableError(
                f"moto server exited with code {process.returncode}:\n{server.output_tail()}"
            )
        if _answers_http(f"{server.url}/moto-api/"):
            return server
        time.sleep(0.1)
    server.stop()
    raise ServiceUnavailableError(
        f"moto server on {server.url} did not answer within {timeout:.0f} s:\n"
        f"{server.output_tail()}"
    )


def aws_client(service: str, endpoint_url: str, region: str = "us-east-1") -> Any:
    """A boto3 client for the moto server at `endpoint_url` with dummy credentials."""
    return boto3.client(
        service,  # type: ignore[call-overload]
        endpoint_url=endpoint_url,
        region_name=region,
        config=Config(
            retries={"max_attempts": 3, "mode": "standard"},
            connect_timeout=5,
            read_timeout=30,
        ),
        **_DUMMY_CREDENTIALS,
    )
