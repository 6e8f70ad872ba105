"""Local Lambda service: runs each template function in warm, isolated worker processes.

A worker (`worker.py`) is one container: its own environment, its own sys.path, its handler
imported once. Workers are reused while idle and added (up to a cap) when all are busy, so
module state behaves as on Lambda: shared between sequential invocations, never between
concurrent ones.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from infra.local.cache_users import ensure_cache_users
from infra.local.database import proxy_stand_in
from infra.local.template import FunctionSpec, ResolveContext, Template, to_env_value

__all__ = [
    "DEFAULT_ENV_VARS",
    "DUMMY_CREDENTIALS",
    "InvokeResult",
    "LambdaRuntime",
    "UnknownFunctionError",
    "read_env_vars",
]

log = logging.getLogger(__name__)

WORKER_SCRIPT = Path(__file__).with_name("worker.py")
MAX_WORKERS_PER_FUNCTION = 8
# Lambda gives the init phase 10 s of its own before the invocation's timeout starts counting.
INIT_TIMEOUT_SECONDS = 10.0
# Host variables a worker keeps: enough to run Python, nothing that leaks the host's settings.
_INHERITED = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "VIRTUAL_ENV")
_INHERITED_PREFIXES = ("COVERAGE_", "PYENV_")


# What every command that runs the template's functions gives them (serve, invoke, schedule, the
# population generator): the SAM --env-vars overrides, and credentials for the moto server.
DEFAULT_ENV_VARS = Path("infra/local/env.json")
# moto accepts any credentials; fixed dummy ones keep a developer's real profile out of reach.
DUMMY_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def read_env_vars(path: str | None) -> dict[str, dict[str, Any]]:
    """SAM --env-vars JSON ({"Parameters": {...}, "<FunctionId>": {...}}); {} when absent."""
    if path is None:
        if not DEFAULT_ENV_VARS.is_file():
            return {}
        path = str(DEFAULT_ENV_VARS)
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise SystemExit(f"{path}: expected {{'Parameters': {{...}}, '<FunctionId>': {{...}}}}")
    return data


class UnknownFunctionError(KeyError):
    """The function name is not an AWS::Serverless::Function of the template."""


@dataclass
class InvokeResult:
    """The outcome of one invocation, as Lambda's Invoke API would report it."""

    ok: bool
    payload: Any  # the handler's return value (None when not ok)
    error: dict[str, Any] | None  # {"errorType", "errorMessage", "stackTrace"} when not ok
    duration_ms: float
    cold: bool  # this invocation paid for starting a worker and importing the handler
    request_id: str = ""


class _WorkerDied(Exception):
    pass


class _Worker:
    """One worker process and the threads that read its protocol pipe and its log."""

    def __init__(
        self,
        spec: FunctionSpec,
        env: dict[str, str],
        paths: list[str],
        python: str,
        log_line: Callable[[str, str], None],
    ) -> None:
        self.function = spec.name
        config = json.dumps({"handler": spec.handler, "paths": paths})
        self.process = subprocess.Popen(
            [python, str(WORKER_SCRIPT), config],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=str(spec.code_uri),
            env=env,
            # Own process group: Ctrl-C in the terminal reaches only the runtime, which then
            # stops workers itself instead of every handler dying mid-request.
            start_new_session=True,
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read_protocol, daemon=True)
        self._reader.start()
        self._logger = threading.Thread(target=self._read_log, args=(log_line,), daemon=True)
        self._logger.start()

    def _read_protocol(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                self.messages.put(json.loads(line))
            except ValueError:
                log.warning("%s: unreadable worker message %r", self.function, line[:200])
        self.messages.put(None)  # EOF: the worker exited

    def _read_log(self, log_line: Callable[[str, str], None]) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            log_line(self.function, raw.decode("utf-8", "replace").rstrip("\n"))

    def receive(self, timeout: float) -> dict[str, Any]:
        message = self.messages.get(timeout=timeout)  # raises queue.Empty on timeout
        if message is None:
            raise _WorkerDied
        return message

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(message).encode() + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise _WorkerDied from exc

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                # The whole group: a handler may have started processes of its own.
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            log.warning("%s: worker %s did not exit", self.function, self.process.pid)
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()

    def stop(self) -> None:
        """Ask politely (EOF on the protocol), then kill."""
        if self.process.poll() is None and self.process.stdin is not None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=1)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()


class _Pool:
    """The workers of one function: idle ones are reused, busy ones are never shared."""

    def __init__(self) -> None:
        self.idle: list[_Worker] = []
        self.count = 0  # idle + busy + starting
        self.changed = threading.Condition()


def _default_log_line(function: str, line: str) -> None:
    sys.stderr.write(f"[{function}] {line}\n")
    sys.stderr.flush()


class LambdaRuntime:
    """Invoke the template's functions locally, each in its own warm worker processes."""

    def __init__(
        self,
        template: Template,
        context: ResolveContext,
        env_overrides: dict[str, dict[str, Any]] | None = None,
        extra_env: dict[str, str] | None = None,
        python: str = sys.executable,
        max_workers_per_function: int = MAX_WORKERS_PER_FUNCTION,
        log_line: Callable[[str, str], None] | None = None,
    ) -> None:
        self.template = template
        self.context = context
        self.env_overrides: dict[str, dict[str, Any]] = dict(env_overrides or {})
        self.extra_env = {**proxy_stand_in(template.resources), **(extra_env or {})}
        self.python = python
        self.max_workers = max_workers_per_function
        self.log_line = log_line or _default_log_line
        self._pools: dict[str, _Pool] = {name: _Pool() for name in template.functions}
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._cache_users_on: set[tuple[str, str]] = set()
        self._executor = ThreadPoolExecutor(
            max_workers=max(32, max_workers_per_function * len(template.functions)),
            thread_name_prefix="lambda-invoke",
        )
        # Workers are separate processes: make sure an interpreter exit never leaves them behind.
        atexit.register(_close_at_exit, weakref.ref(self))

    # ---------------------------------------------------------------- configuration

    def update_env_overrides(self, overrides: dict[str, dict[str, Any]]) -> None:
        """Merge more --env-vars style overrides; workers started from now on see them.

        Used by `serve` once the gateways know their ports (WEBSOCKET_CALLBACK_URL). Running
        workers are retired so that no invocation sees the old value.
        """
        for section, values in overrides.items():
            self.env_overrides.setdefault(section, {}).update(values)
        self.recycle()

    def recycle(self) -> None:
        """Stop every idle worker (the next invocation is a cold start)."""
        for pool in self._pools.values():
            with pool.changed:
                idle, pool.idle = pool.idle, []
                pool.count -= len(idle)
                pool.changed.notify_all()
            for worker in idle:
                self._forget(worker)
                worker.stop()

    def spec(self, function_name: str) -> FunctionSpec:
        try:
            return self.template.functions[function_name]
        except KeyError:
            raise UnknownFunctionError(function_name) from None

    def function_arn(self, function_name: str) -> str:
        """The function's ARN (with its FunctionName when the template sets one)."""
        return str(self.template.resolve({"Fn::GetAtt": [function_name, "Arn"]}, self.context))

    def environment_for(self, function_name: str) -> dict[str, str]:
        """The complete environment a worker of this function runs with.

        Order: a few host variables, the template's Environment.Variables (Globals merged,
        intrinsics resolved), then the env_overrides (`Parameters` first, then the function's
        own section; like `sam local --env-vars`, only variables the template declares for the
        function are overridden), then Lambda's reserved variables, then extra_env (which starts
        with the RDS Proxy stand-in's PGOPTIONS: infra.local.database.proxy_stand_in).
        """
        spec = self.spec(function_name)
        env = {key: value for key, value in os.environ.items() if key in _INHERITED}
        env.update({k: v for k, v in os.environ.items() if k.startswith(_INHERITED_PREFIXES)})
        declared = self.template.resolve(spec.environment, self.context) or {}
        function_env = {key: to_env_value(value) for key, value in declared.items()}
        for section in ("Parameters", function_name):
            for key, value in (self.env_overrides.get(section) or {}).items():
                if key in function_env and value is not None:
                    function_env[key] = to_env_value(value)
        env.update(function_env)
        name = spec.properties.get("FunctionName")
        name = self.template.resolve(name, self.context) if name is not None else function_name
        code_root = str(spec.code_uri)
        env.update(
            {
                "AWS_LAMBDA_FUNCTION_NAME": str(name),
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory),
                "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
                "AWS_LAMBDA_FUNCTION_TIMEOUT": str(spec.timeout),
                "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{name}",
                "AWS_LAMBDA_LOG_STREAM_NAME": time.strftime("%Y/%m/%d/[$LATEST]")
                + uuid.uuid4().hex,
                "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
                "AWS_EXECUTION_ENV": f"AWS_Lambda_{spec.runtime or 'python3.13'}",
                "AWS_REGION": self.context.region,
                "AWS_DEFAULT_REGION": self.context.region,
                "AWS_ACCOUNT_ID": self.context.account_id,
                "AWS_SAM_LOCAL": "true",
                "_HANDLER": spec.handler,
                "LAMBDA_TASK_ROOT": code_root,
                "LAMBDA_RUNTIME_DIR": str(Path(sys.executable).parent),
                "TZ": "UTC",
                "PYTHONDONTWRITEBYTECODE": "1",
            }
        )
        env.update({key: str(value) for key, value in self.extra_env.items()})
        return env

    def sys_path_for(self, function_name: str) -> list[str]:
        """CodeUri first, then the layers' directories (what /opt/python holds on AWS)."""
        spec = self.spec(function_name)
        paths = [str(spec.code_uri)]
        for layer in spec.layers:
            layer_id = layer.get("Ref") if isinstance(layer, dict) else None
            resource = self.template.resources.get(layer_id or "", {})
            content = (resource.get("Properties") or {}).get("ContentUri")
            if isinstance(content, str):
                layer_dir = (self.template.root / content).resolve()
                # A pre-built layer keeps its packages under python/, a SAM-built one at the top.
                prebuilt = layer_dir / "python"
                paths.append(str(prebuilt if prebuilt.is_dir() else layer_dir))
        shared = self.template.root / "layers" / "shared"
        if shared.is_dir() and str(shared.resolve()) not in paths:
            paths.append(str(shared.resolve()))
        return list(dict.fromkeys(paths))

    # ---------------------------------------------------------------- invocation

    def invoke(self, function_name: str, event: dict, timeout: float | None = None) -> InvokeResult:
        """Run one invocation and wait for it (thread-safe; one invocation per worker)."""
        spec = self.spec(function_name)
        limit = float(timeout if timeout is not None else spec.timeout)
        request_id = str(uuid.uuid4())
        started = time.perf_counter()
        try:
            worker, cold, init_error = self._acquire(spec)
        except _WorkerDied:
            return self._failure(
                started, True, request_id, "Runtime.ExitError",
                f"RequestId: {request_id} Error: Runtime exited without providing a reason",
            )  # fmt: skip
        if init_error is not None:
            return InvokeResult(False, None, init_error, _ms(started), True, request_id)
        self.log_line(function_name, f"START RequestId: {request_id} Version: $LATEST")
        invoke_started = time.perf_counter()
        try:
            worker.send(
                {
                    "request_id": request_id,
                    "event": event,
                    "deadline_ms": int((time.time() + limit) * 1000),
                    "invoked_function_arn": self.function_arn(function_name),
                }
            )
            reply = worker.receive(timeout=limit)
        except queue.Empty:
            self._discard(spec.name, worker)
            self.log_line(function_name, f"END RequestId: {request_id}")
            return self._failure(
                started, cold, request_id, "Sandbox.Timedout",
                f"RequestId: {request_id} Error: Task timed out after {limit:.2f} seconds",
            )  # fmt: skip
        except _WorkerDied:
            code = worker.process.wait()
            self._discard(spec.name, worker)
            self.log_line(function_name, f"END RequestId: {request_id}")
            return self._failure(
                started, cold, request_id, "Runtime.ExitError",
                f"RequestId: {request_id} Error: Runtime exited with error: exit status {code}",
            )  # fmt: skip
        self._release(spec.name, worker)
        duration = _ms(invoke_started)
        self.log_line(function_name, f"END RequestId: {request_id}")
        self.log_line(
            function_name,
            f"REPORT RequestId: {request_id}\tDuration: {duration:.2f} ms\t"
            f"Memory Size: {spec.memory} MB",
        )
        if reply.get("ok"):
            return InvokeResult(True, reply.get("payload"), None, _ms(started), cold, request_id)
        return InvokeResult(False, None, reply.get("error"), _ms(started), cold, request_id)

    async def ainvoke(self, function_name: str, event: dict) -> InvokeResult:
        """`invoke` from an event loop, without blocking it."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self.invoke, function_name, event)

    def _failure(
        self, started: float, cold: bool, request_id: str, error_type: str, message: str
    ) -> InvokeResult:
        error = {"errorType": error_type, "errorMessage": message, "stackTrace": []}
        return InvokeResult(False, None, error, _ms(started), cold, request_id)

    def _ensure_cache_users(self, environment: dict[str, str]) -> None:
        """The cache user a function signs in as (REDIS_IAM_USER) exists on the Redis it is
        given, as the template's AWS::ElastiCache::User does on AWS: made once per runtime and
        server, before the first worker that needs it."""
        url, cluster = environment.get("REDIS_URL"), environment.get("REDIS_CLUSTER", "")
        if not environment.get("REDIS_IAM_USER") or not url:
            return
        with self._lock:
            if (url, cluster) in self._cache_users_on:
                return
            ensure_cache_users(self.template, self.context, url, cluster.lower() == "true")
            self._cache_users_on.add((url, cluster))

    def _acquire(self, spec: FunctionSpec) -> tuple[_Worker, bool, dict[str, Any] | None]:
        """An idle warm worker, or a new one (cold) when all are busy and the cap allows."""
        if self._closed:
            raise RuntimeError("LambdaRuntime is closed")
        pool = self._pools[spec.name]
        with pool.changed:
            while True:
                while pool.idle:
                    worker = pool.idle.pop()
                    if worker.alive:
                        return worker, False, None
                    pool.count -= 1  # died while idle: reap it and look again
                    self._forget(worker)
                    worker.kill()
                if pool.count < self.max_workers:
                    pool.count += 1
                    break
                pool.changed.wait()
        try:
            environment = self.environment_for(spec.name)
            self._ensure_cache_users(environment)
            worker = _Worker(
                spec,
                environment,
                self.sys_path_for(spec.name),
                self.python,
                self.log_line,
            )
        except BaseException:
            self._uncount(pool)
            raise
        with self._lock:
            self._all.add(worker)
        try:
            hello = worker.receive(timeout=INIT_TIMEOUT_SECONDS + spec.timeout)
        except (queue.Empty, _WorkerDied):
            self._discard(spec.name, worker)
            raise _WorkerDied from None
        if not hello.get("ready"):
            self._discard(spec.name, worker)
            return worker, True, hello.get("error")
        self.log_line(spec.name, f"INIT Duration: {hello.get('init_ms', 0):.2f} ms")
        return worker, True, None

    def _release(self, function_name: str, worker: _Worker) -> None:
        pool = self._pools[function_name]
        if self._closed:
            self._discard(function_name, worker)
            return
        with pool.changed:
            pool.idle.append(worker)
            pool.changed.notify()

    def _discard(self, function_name: str, worker: _Worker) -> None:
        worker.kill()
        self._forget(worker)
        self._uncount(self._pools[function_name])

    def _uncount(self, pool: _Pool) -> None:
        with pool.changed:
            pool.count -= 1
            pool.changed.notify()

    def _forget(self, worker: _Worker) -> None:
        with self._lock:
            self._all.discard(worker)

    def worker_count(self, function_name: str | None = None) -> int:
        """Live workers (of one function, or all): lets tests check that none is left over."""
        with self._lock:
            return sum(
                1
                for worker in self._all
                if worker.alive and (function_name is None or worker.function == function_name)
            )

    def close(self) -> None:
        """Stop every worker; invocations still running end with an error."""
        if self._closed:
            return
        self._closed = True
        with self._lock:
            workers = list(self._all)
            self._all.clear()
        for worker in workers:
            worker.stop()
        self._executor.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _close_at_exit(ref: weakref.ref[LambdaRuntime]) -> None:
    runtime = ref()
    if runtime is not None:
        runtime.close()
