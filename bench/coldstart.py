"""Cold starts: each function's import and initialisation in a fresh process, against boto3's.

A child process gets ``sys.path = [functions/<name>, layers/shared, <stdlib>, <site-packages>]``
(Lambda's /var/task and /opt/python; ``python -I``, so nothing else leaks in), times
``import app`` (module-level initialisation included), then invokes the handler twice with a
sample event: the first invocation builds the clients (Redis, PostgreSQL, botocore), the second
is warm. The baseline is ``import boto3`` alone, in its own fresh process, in the same rounds.

``sam build`` ships no .pyc files (aws-lambda-builders excludes ``*.pyc``/``__pycache__`` and
unpacks wheels without compiling) and /var/task and /opt are read-only, so on Lambda every
module outside the runtime's standard library is compiled from source at each cold start. The
"no .pyc" rows imitate that: the child refuses cached bytecode for anything outside the stdlib.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import stack
from bench.accounts import people
from bench.harness import Precomputed, Run, fmt_ns, group

FUNCTIONS = ("accounts", "websocket", "meta")
REPS = 7  # fresh processes per function (and for boto3)
NO_PYC_EVERY = 2  # the slow no-.pyc pair runs in every 2nd round only

_CHILD = r"""
import sys, time
target, fn_dir, shared, event_file, no_pyc, module = sys.argv[1:7]
if no_pyc == "1":
    import sysconfig
    import importlib._bootstrap_external as bootstrap
    stdlib, cached = sysconfig.get_paths()["stdlib"], bootstrap.cache_from_source
    def only_stdlib(path, *args, **kwargs):
        if not path.startswith(stdlib) or "site-packages" in path:
            raise NotImplementedError  # the loader then compiles the source
        return cached(path, *args, **kwargs)
    bootstrap.cache_from_source = only_stdlib
if target != "boto3":
    sys.path[:0] = [fn_dir, shared]
start = time.perf_counter_ns()
if target == "boto3":
    import boto3
else:
    import importlib
    app = importlib.import_module(module)
out = {"import_ns": time.perf_counter_ns() - start, "modules": len(sys.modules)}
import json
if event_file:
    class Context:
        function_name = target
        function_version = "$LATEST"
        invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:" + target
        memory_limit_in_mb = 1024
        aws_request_id = "c6af9ac6-7b61-11e6-9a41-93e812345678"
        log_group_name = "/aws/lambda/" + target
        log_stream_name = "stream"
        def get_remaining_time_in_millis(self):
            return 10_000
    text = open(event_file).read()
    answers = []
    for name in ("first_ns", "second_ns"):
        event = json.loads(text)
        start = time.perf_counter_ns()
        answer = app.handler(event, Context())
        out[name] = time.perf_counter_ns() - start
        answers.append(answer)
    out["answers"] = answers
print("BENCH " + json.dumps(out))
"""


def template_functions() -> dict[str, tuple[Path, str]]:
    """Every function of template.yaml: {short name: (code directory, handler module)}."""
    from infra.local.template import load_template

    template = load_template(stack.ROOT / "template.yaml")
    found = {}
    for spec in template.functions.values():
        code = spec.code_uri if spec.code_uri.is_absolute() else stack.ROOT / spec.code_uri
        module = spec.handler.rsplit(".", 1)[0]
        found[code.name if code.parent.name == "functions" else module] = (code, module)
    return found


def _child(
    target: str,
    env: dict[str, str],
    event_file: str = "",
    no_pyc: bool = False,
    code: tuple[Path, str] | None = None,
) -> dict:
    fn_dir, module = code or (stack.FUNCTIONS / target, "app")
    command = [sys.executable, "-I"]
    if no_pyc:
        command.append("-B")  # and write none either
    command += ["-c", _CHILD, target, str(fn_dir), str(stack.SHARED), event_file, str(int(no_pyc)),
                module]  # fmt: skip
    started = time.perf_counter_ns()
    lambda_env = {
        # What Lambda sets. LAMBDA_TASK_ROOT matters: without it aws_xray_sdk (imported by
        # Powertools' Tracer) builds a botocore X-Ray client at import, as it does off Lambda.
        "LAMBDA_TASK_ROOT": str(fn_dir),
        "AWS_LAMBDA_FUNCTION_NAME": target,
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
        "_HANDLER": f"{module}.handler",
        "POWERTOOLS_SERVICE_NAME": target,
    }
    proc = subprocess.run(
        command,
        env={**env, **lambda_env},
        cwd=fn_dir if fn_dir.is_dir() else stack.ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    wall = time.perf_counter_ns() - started
    lines = [line for line in proc.stdout.splitlines() if line.startswith("BENCH ")]
    if proc.returncode or not lines:
        raise RuntimeError(f"cold-start child {target} failed:\n{proc.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(lines[-1].removeprefix("BENCH "))
    out["wall_ns"] = wall
    return out


def _ok(target: str, answer: dict[str, Any], user_id: str) -> bool:
    return bool(answer.get("statusCode") == 200)


@group("coldstart", "import + initialisation in a fresh process, and the first invocation")
def coldstart_group(run: Run) -> Iterator[Precomputed]:
    import redis
    from warble import keys

    who = people(run)
    token = who.alice.token
    user_id = str(who.alice.user["id"])
    raw = redis.Redis.from_url(stack.BENCH_REDIS_URL)
    run.cleanups.append(raw.close)
    seen_key = keys.session_seen(int(who.alice.session.id))

    events: dict[str, dict[str, Any]] = {"accounts": who.get_user_event()}
    connect = stack.event("websocket/connect.json")
    connect["queryStringParameters"]["token"] = token
    events["websocket"] = connect
    events["meta"] = stack.event("meta/health.json")

    # Warm the shared caches the first invocations read (session, profile and counts), as a
    # cold container of a live service would find them.
    from warble import services

    services.accounts().authenticate(token)
    stack.load_function("accounts").handler(events["accounts"], stack.Context())

    env = dict(os.environ)
    # The other functions (stream consumers, schedules, the graph and tweets APIs, the
    # migration): import and initialisation only; their first invocation needs stream records
    # or a schedule, not a sample request.
    every = template_functions()
    import_only = [name for name in every if name not in FUNCTIONS]
    reps = max(3, round(REPS * run.scale))
    samples: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="warble-bench-") as tmp:
        files = {}
        for name, evt in events.items():
            path = Path(tmp) / f"{name}.json"
            path.write_text(json.dumps(evt))
            files[name] = str(path)
        _child("boto3", env)  # the first child of a run pays for cold OS caches: not counted
        for rep in range(reps):
            order: list[tuple[str, str, bool]] = [("boto3", "", False)]
            order += [(name, files[name], False) for name in FUNCTIONS]
            order += [(name, "", False) for name in import_only]
            if rep % NO_PYC_EVERY == 0:
                order += [("boto3", "", True), ("accounts", "", True)]
            for target, event_file, no_pyc in order:
                if target == "accounts" and event_file:
                    raw.delete(seen_key)  # so the first request also opens PostgreSQL
                out = _child(target, env, event_file, no_pyc, code=every.get(target))
                for answer in out.get("answers", []):
                    if not _ok(target, answer, user_id):
                        raise RuntimeError(f"{target} answered {answer}")
                samples.setdefault(target + (" no-pyc" if no_pyc else ""), []).append(out)

    def series(key: str, field: str) -> list[int]:
        return [int(s[field]) for s in samples[key]]

    def wall_note(key: str) -> str:
        return fmt_ns(sorted(series(key, "wall_ns"))[len(samples[key]) // 2])

    boto3_label = "import boto3 (fresh process)"
    for name in [*FUNCTIONS, *import_only]:
        modules = samples[name][0]["modules"]
        yield Precomputed(
            f"cold start: import + init of {name} ({reps} fresh processes)",
            ("import app", series(name, "import_ns")),
            [(boto3_label, series("boto3", "import_ns"))],
            notes=[
                f"{modules} modules loaded; whole child process (interpreter start, import, "
                f"two invocations, exit) median wall {wall_note(name)} vs "
                f"{wall_note('boto3')} for the boto3 child"
            ],
        )
    no_pyc_runs = len(samples["accounts no-pyc"])
    yield Precomputed(
        f"cold start without .pyc (as sam build ships code and layers): accounts "
        f"({no_pyc_runs} fresh processes)",
        ("import app, compiling every non-stdlib module", series("accounts no-pyc", "import_ns")),
        [
            ("import boto3, compiling boto3/botocore", series("boto3 no-pyc", "import_ns")),
            ("import app with .pyc (the row above)", series("accounts", "import_ns")),
        ],
        notes=[
            "imitates Lambda after sam build: no __pycache__ shipped, /var/task and /opt "
            "read-only; the stdlib keeps its .pyc as in the Lambda runtime"
        ],
    )
    first_notes = {
        "accounts": "GET /v1/users/{id} of another user (warm Redis cache). The first call "
        "connects to Redis and PostgreSQL (the session's 'seen' key is deleted before each "
        "child, so it also touches the session row), imports pynamodb/botocore and builds the "
        "DynamoDB client (services.graph() is built on first use)",
        "websocket": "$connect with a real token: session lookup, DynamoDB TransactWriteItems",
        "meta": "GET /v1/health: no store",
    }
    for name in FUNCTIONS:
        yield Precomputed(
            f"first invocation after a cold import: {name} ({reps} fresh processes)",
            ("1st invocation (builds settings, clients, services)", series(name, "first_ns")),
            [("2nd invocation, same process", series(name, "second_ns"))],
            notes=[first_notes[name]],
        )
