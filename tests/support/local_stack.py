"""Starting and stopping `python -m infra.local serve` as a child process, for the e2e tier."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_READY = re.compile(r"READY http=(\S+) ws=(\S+) moto=(\S+) web=(\S+)(?: s3=(\S+) media=(\S+))?")


@dataclass
class Served:
    http: str
    ws: str
    moto: str
    web: str  # "-" when serve was started with --web-port -1
    s3: str | None  # the S3 endpoint (uploads)
    media: str | None  # the media CDN ("-" when the template has no distribution)
    process: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)


def start_serve(
    env_file: Path,
    env_vars: dict,
    *,
    template: Path | None = None,
    extra_args: list[str] | None = None,
    drop_env_prefixes: tuple[str, ...] = ("AWS_",),
    timeout: float = 90,
) -> Served:
    """Write ``env_vars`` (SAM --env-vars shape) to ``env_file``, start serve on free ports, and
    wait for its READY line. The child sees none of this process's AWS (and other dropped)
    settings, so it configures itself from the template and the env file alone."""
    env_file.write_text(json.dumps(env_vars))
    command = [
        sys.executable, "-m", "infra.local", "serve",
        "--http-port", "0", "--ws-port", "0", "--moto-port", "0",
        "--web-port", "0", "--s3-port", "0", "--media-port", "0",
        "--env-vars", str(env_file), *(extra_args or []),
    ]  # fmt: skip
    if template is not None:
        command += ["--template", str(template)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop_env_prefixes)}
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: queue.Queue[str] = queue.Queue()
    output: list[str] = []

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            continue
        match = _READY.match(line)
        if match:
            return Served(*match.groups(), process, output)
    process.kill()
    raise AssertionError("serve did not get ready:\n" + "".join(output[-80:]))


def stop_serve(served: Served, timeout: float = 20) -> int:
    """Ctrl-C, as a developer would; returns the exit code."""
    served.process.send_signal(signal.SIGINT)
    try:
        return served.process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        served.process.kill()
        raise
