"""Cold starts: each function's import and initialisation in a fresh process, against boto3's.

Every function of template.yaml (its CodeUri and Handler): a child process gets
``sys.path = [<CodeUri>, layers/shared, <stdlib>, <site-packages>]`` (Lambda's /var/task and
/opt/python; ``python -I``, so nothing else leaks in), times ``import app`` (module-level
initialisation included), then, for the functions with a first request (``first_requests``),
invokes the handler twice with a sample event: the first invocation builds the settings and
the clients (Redis, PostgreSQL, botocore) and imports what the stores need, the second is
warm. The baseline is ``import boto3`` alone, in its own fresh process, in the same rounds.
Children run traced, as on AWS (``LAMBDA_TASK_ROOT`` and a trace header set, tracing not
disabled); the "cold request" rows add import, init and the first invocation: what the first
request of a new container waits for.

SAM's Python builder ships no .pyc files (aws-lambda-builders excludes ``*.pyc``/``__pycache__``
and unpacks wheels without compiling) and /var/task and /opt are read-only, so on Lambda every
module it packaged was compiled from source at each cold start; the layers are now built by
their Makefiles, with their bytecode. The "no .pyc" rows imitate what they cost before: the child
refuses cached bytecode for anything outside the stdlib.
"""

from __future__ import annotations

import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import stack
from bench.accounts import People, people
from bench.harness import Precomputed, Run, fmt_ns, group

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
start, cpu = time.perf_counter_ns(), time.process_time_ns()
if target == "boto3":
    import boto3
else:
    import importlib
    app = importlib.import_module(module)
out = {"import_ns": time.perf_counter_ns() - start, "import_cpu_ns": time.process_time_ns() - cpu,
       "modules": len(sys.modules)}
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
    for name in ("first", "second"):
        event = json.loads(text)
        start, cpu = time.perf_counter_ns(), time.process_time_ns()
        answer = app.handler(event, Context())
        out[name + "_ns"] = time.perf_counter_ns() - start
        out[name + "_cpu_ns"] = time.process_time_ns() - cpu
        answers.append(answer)
    out["answers"] = answers
# The third-party modules the cold request loaded (site-packages: Lambda's layer), in the order
# they were first imported, for the "its libraries alone" baseline.
site = tuple(path for path in sys.path if path.endswith("site-packages"))
out["libraries"] = [name for name, found in list(sys.modules.items())
                    if (getattr(found, "__file__", None) or "").startswith(site)]
print("BENCH " + json.dumps(out))
"""

# A fresh process that imports, in the same order, the third-party modules a function's cold
# request loaded (the list is a JSON file, the last argument), and nothing of Warble: what the
# cold request would cost if our own code cost nothing. The collector is off while it imports,
# as it is during a function's start-up (warble.startup).
_LIBRARIES = r"""
import gc, importlib, json, sys, time
gc.disable()
names = json.load(open(sys.argv[-1]))
start, cpu = time.perf_counter_ns(), time.process_time_ns()
failed = []
for name in names:
    try:
        importlib.import_module(name)
    except Exception:
        failed.append(name)
print("BENCH " + json.dumps({"import_ns": time.perf_counter_ns() - start,
                             "import_cpu_ns": time.process_time_ns() - cpu,
                             "modules": len(sys.modules), "failed": failed}))
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
    script: str = _CHILD,
    options: tuple[str, ...] = (),
    extra: tuple[str, ...] = (),
    shared: Path | None = None,
) -> dict:
    """One fresh process (``script``, the child above unless bench.profile's; ``options`` go to
    the interpreter, e.g. ``-X importtime``; ``extra`` arguments to the script; ``shared``, the
    shared layer of another tree, bench.cold_ab's)."""
    fn_dir, module = code or (stack.FUNCTIONS / target, "app")
    command = [sys.executable, "-I", *options]
    if no_pyc:
        command.append("-B")  # and write none either
    command += ["-c", script, target, str(fn_dir), str(shared or stack.SHARED), event_file,
                str(int(no_pyc)), module, *extra]  # fmt: skip
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
        # Traced, as with the template's Tracing: Active: the trace header Lambda hands the
        # function (its segments go to an X-Ray daemon address nothing listens on).
        "_X_AMZN_TRACE_ID": "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;"
        "Sampled=1",
    }
    traced = {k: v for k, v in env.items() if k != "POWERTOOLS_TRACE_DISABLED"}
    proc = subprocess.run(
        command,
        env={**traced, **lambda_env},
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
    out["stderr"] = proc.stderr
    return out


def _ok(answer: dict[str, Any]) -> bool:
    """An HTTP or WebSocket 200, an authorizer's Allow, a stream batch with no failed record, or
    the migrations run."""
    if "policyDocument" in answer:
        return bool(answer["policyDocument"]["Statement"][0]["Effect"] == "Allow")
    if "statusCode" in answer:
        return bool(answer["statusCode"] == 200)
    return answer == {"batchItemFailures": []} or "applied" in answer


def _stream_sample(name: str, prefix: str) -> dict[str, Any]:
    """A stream sample of events/ with its records' source ARNs on this stack's tables."""
    text = (stack.EVENTS / name).read_text().replace(":table/warble-local-", f":table/{prefix}")
    result: dict[str, Any] = json.loads(text)
    return result


def first_requests(who: People) -> dict[str, tuple[dict[str, Any], str]]:
    """Each function's first invocation: {short name: (event, what it does)}.

    Sample events from events/ as alice (the notifications and discover functions have none of
    their own: theirs are built from another route's sample); the migration gets the ``{}``
    infra/deploy.sh sends it (the bench database is migrated already: it applies nothing). The
    schedule (reconcile) has none: its first run's work is what the other groups of the run
    left behind, not a cold start's cost.
    """
    from bench.discover import http_event

    alice = who.alice
    prefix = who.stack.tables["GraphTable"].removesuffix("graph")
    authorize = stack.event("websocket/authorize.json")
    authorize["queryStringParameters"]["token"] = alice.token
    return {
        "accounts": (
            who.get_user_event(),
            "GET /v1/users/{id} of another user (warm Redis cache). The first call connects to "
            "Redis and PostgreSQL (the session's 'seen' key is deleted before each child, so it "
            "also touches the session row), imports pynamodb/botocore and builds the DynamoDB "
            "client (the relationship lookup)",
        ),
        "websocket": (
            authorize,
            "the $connect authorizer with a real token: the session and its budget (one Redis "
            "script)",
        ),
        "meta": (stack.event("meta/health.json"), "GET /v1/health: no store"),
        "graph": (
            stack.as_session(stack.event("graph/following.json"), alice),
            "GET /v1/users/me/following: DynamoDB Query + profiles",
        ),
        "tweets": (
            stack.as_session(stack.event("tweets/home.json"), alice),
            "GET /v1/timeline/home: Redis timeline, tweets, counters",
        ),
        "notifications": (
            http_event(alice, "GET", "/v1/notifications/unread-counts"),
            "GET /v1/notifications/unread-counts (event built from another route's sample)",
        ),
        "discover": (
            http_event(alice, "GET", "/v1/discover/matches"),
            "GET /v1/discover/matches (event built from another route's sample)",
        ),
        "conversations": (
            stack.as_session(stack.event("conversations/list.json"), alice),
            "GET /v1/conversations",
        ),
        "fanout": (
            _stream_sample("timeline/tweets-stream.json", prefix),
            "events/timeline/tweets-stream.json: fan-out of a post and a delete, their counters",
        ),
        "reactions": (
            _stream_sample("counters/graph-stream.json", prefix),
            "events/counters/graph-stream.json (the graph stream feeds it): follow notifications",
        ),
        "migrate": ({}, "yoyo on the migrated bench database: takes its lock, applies nothing"),
    }


def seen_key(who: People) -> str:
    """alice's session "seen" key: deleted before each accounts child, so that its first request
    also touches the session row (opens PostgreSQL), as a cold container's would."""
    from warble import keys, security

    token = who.alice.token
    return keys.session_seen(security.token_hash(token).hex(), security.token_user(token))


def warmed_event_files(
    first: dict[str, tuple[dict[str, Any], str]],
    every: dict[str, tuple[Path, str]],
    directory: Path,
) -> dict[str, str]:
    """Each function's first request, invoked once here and written to a file for the children.

    The invocation warms the shared caches the children's first invocations read (session,
    profile, counts, the home timeline), as a cold container of a live service would find them,
    and checks that every sample gets a good answer before the fresh processes start."""
    files = {}
    for name, (evt, _) in first.items():
        code, module = every[name]
        handler = stack.load_function(name, code / f"{module}.py").handler
        answer = handler(copy.deepcopy(evt), stack.Context())
        if not _ok(answer):
            raise RuntimeError(f"{name} answered {answer}")
        path = directory / f"{name}.json"
        path.write_text(json.dumps(evt))
        files[name] = str(path)
    return files


@group("coldstart", "import + initialisation in a fresh process, and the first invocation")
def coldstart_group(run: Run) -> Iterator[Precomputed]:
    s = cold_samples(run)
    yield from cold_imports(s)
    yield cold_import_without_pyc(s)
    yield from cold_requests(s)
    yield from first_invocations(s)


BOTO3_LABEL = "import boto3 (fresh process)"


@dataclass
class ColdSamples:
    """Every fresh process of the run, by what it ran: each function (its import, then its
    first requests), the boto3 baseline, each function's libraries alone, and the no-pyc runs;
    a round runs one of each, in turn."""

    every: dict[str, tuple[Path, str]]  # the template's functions
    first: dict[str, tuple[dict[str, Any], str]]  # the functions with first requests
    reps: int
    samples: dict[str, list[dict[str, Any]]]

    def series(self, key: str, field: str) -> list[int]:
        return [int(s[field]) for s in self.samples[key]]

    def median(self, key: str, field: str) -> float:
        return float(statistics.median(self.series(key, field)))

    def cold_total(self, key: str) -> str:
        return fmt_ns(statistics.median(s["import_ns"] + s["first_ns"] for s in self.samples[key]))

    def wall_note(self, key: str) -> str:
        return fmt_ns(self.median(key, "wall_ns"))

    def cpu_note(self, key: str, field: str, baseline: str, baseline_field: str, what: str) -> str:
        # CPU time counts only this process's own work: other work on a shared machine stretches
        # the wall times above far more than it does these.
        ratio = self.median(key, field) / self.median(baseline, baseline_field)
        return (
            f"CPU time (process_time), median: {fmt_ns(self.median(key, field))} vs "
            f"{fmt_ns(self.median(baseline, baseline_field))} for {what} ({ratio:.1f}x)"
        )

    def per_round(self, totals: list[int], baseline: str) -> float:
        # samples[baseline][i] ran in the same round as totals[i]
        rounds = zip(totals, self.series(baseline, "import_ns"), strict=True)
        return float(statistics.median(total / base for total, base in rounds))


def cold_samples(run: Run) -> ColdSamples:
    import redis

    who = people(run)
    raw = redis.Redis.from_url(stack.BENCH_REDIS_URL)
    run.cleanups.append(raw.close)
    seen = seen_key(who)
    every = template_functions()
    first = first_requests(who)
    unknown = set(first) - set(every)
    if unknown:
        raise RuntimeError(f"first requests for functions not in template.yaml: {unknown}")

    env = dict(os.environ)
    reps = max(3, round(REPS * run.scale))
    samples: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="warble-bench-") as tmp:
        files = warmed_event_files(first, every, Path(tmp))
        _child("boto3", env)  # the first child of a run pays for cold OS caches: not counted
        for rep in range(reps):
            order: list[tuple[str, str, bool]] = [("boto3", "", False)]
            order += [(name, files.get(name, ""), False) for name in every]
            if rep % NO_PYC_EVERY == 0:
                order += [("boto3", "", True), ("accounts", "", True)]
            for target, event_file, no_pyc in order:
                if target == "accounts" and event_file:
                    raw.delete(seen)  # so the first request also opens PostgreSQL
                out = _child(target, env, event_file, no_pyc, code=every.get(target))
                for answer in out.get("answers", []):
                    if not _ok(answer):
                        raise RuntimeError(f"{target} answered {answer}")
                samples.setdefault(target + (" no-pyc" if no_pyc else ""), []).append(out)
                if event_file:  # and its libraries alone, right after it
                    listed = Path(tmp) / f"{target}.libraries.json"
                    if not listed.exists():
                        listed.write_text(json.dumps(out["libraries"]))
                    alone = _child(target, env, script=_LIBRARIES, extra=(str(listed),),
                                   code=every.get(target))  # fmt: skip
                    samples.setdefault(f"{target} libraries", []).append(alone)
    return ColdSamples(every, first, reps, samples)


def cold_imports(s: ColdSamples) -> Iterator[Precomputed]:
    """Each function's import and initialisation, against import boto3."""
    for name in s.every:
        modules = s.samples[name][0]["modules"]
        invocations = "two invocations, " if name in s.first else ""
        yield Precomputed(
            f"cold start: import + init of {name} ({s.reps} fresh processes)",
            ("import app", s.series(name, "import_ns")),
            [(BOTO3_LABEL, s.series("boto3", "import_ns"))],
            notes=[
                s.cpu_note(name, "import_cpu_ns", "boto3", "import_cpu_ns", "import boto3"),
                f"{modules} modules loaded; whole child process (interpreter start, import, "
                f"{invocations}exit) median wall {s.wall_note(name)} vs "
                f"{s.wall_note('boto3')} for the boto3 child",
            ],
        )


def cold_import_without_pyc(s: ColdSamples) -> Precomputed:
    no_pyc_runs = len(s.samples["accounts no-pyc"])
    return Precomputed(
        f"cold start without .pyc (as SAM's Python builder ships code; the layers now ship "
        f"theirs): accounts "
        f"({no_pyc_runs} fresh processes)",
        ("import app, compiling every non-stdlib module", s.series("accounts no-pyc", "import_ns")),
        [
            ("import boto3, compiling boto3/botocore", s.series("boto3 no-pyc", "import_ns")),
            ("import app with .pyc (the row above)", s.series("accounts", "import_ns")),
        ],
        notes=[
            "imitates Lambda after sam build: no __pycache__ shipped, /var/task and /opt "
            "read-only; the stdlib keeps its .pyc as in the Lambda runtime"
        ],
    )


def cold_requests(s: ColdSamples) -> Iterator[Precomputed]:
    """Each cold request (import, init and the first invocation), against import boto3 and
    against its third-party modules imported alone."""
    for name in s.first:
        totals = [x["import_ns"] + x["first_ns"] for x in s.samples[name]]
        libraries = f"{name} libraries"
        failed = s.samples[libraries][0]["failed"]
        named = ": " + ", ".join(failed[:5]) if failed else ""
        yield Precomputed(
            f"cold request: import + init + 1st invocation of {name}, traced ({s.reps} fresh "
            "processes)",
            ("import + init + 1st invocation", totals),
            [
                (BOTO3_LABEL, s.series("boto3", "import_ns")),
                (
                    f"its {len(s.samples[name][0]['libraries'])} third-party modules imported "
                    "alone (fresh process)",
                    s.series(libraries, "import_ns"),
                ),
            ],
            notes=[
                s.cpu_note(name, "first_cpu_ns", "boto3", "import_cpu_ns", "import boto3")
                + " (the 1st invocation alone)",
                f"the libraries alone cover no client, connection or call; {len(failed)} of "
                f"their modules would not import alone{named}",
                # This machine's speed drifts between rounds more than between the children of
                # one round: each round's own ratio, then their median, cancels the drift.
                f"median of the rounds' own ratios: {s.per_round(totals, 'boto3'):.2f}x import "
                f"boto3, {s.per_round(totals, libraries):.2f}x its libraries alone",
            ],
        )


def first_invocations(s: ColdSamples) -> Iterator[Precomputed]:
    """Each function's first invocation after a cold import, against its second."""
    for name, (_, what) in s.first.items():
        yield Precomputed(
            f"first invocation after a cold import: {name} ({s.reps} fresh processes)",
            ("1st invocation (builds settings, clients, services)", s.series(name, "first_ns")),
            [("2nd invocation, same process", s.series(name, "second_ns"))],
            notes=[
                what,
                f"import + init + 1st invocation (what the cold request waits for, in-process), "
                f"median: {s.cold_total(name)}",
                s.cpu_note(name, "first_cpu_ns", name, "second_cpu_ns", "the 2nd")
                + "; waits on the stores are not CPU time",
            ],
        )
