"""A function's cold start runs without the cyclic garbage collector (``warble.startup``): off
from its app.py's first import to the end of its first invocation, then frozen and back on. Off
Lambda, importing the package changes nothing."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import gc, json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import app
states = [[gc.isenabled(), gc.get_freeze_count()]]
class Context:
    function_name, function_version, memory_limit_in_mb = "meta", "$LATEST", 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:meta"
    aws_request_id, log_group_name, log_stream_name = "r", "g", "s"
for _ in range(2):
    answer = app.handler(json.loads(sys.argv[3]), Context())
    states.append([gc.isenabled(), gc.get_freeze_count()])
print(json.dumps({"status": answer["statusCode"], "states": states}))
"""


def _meta_in_a_fresh_process(on_lambda: bool) -> dict:
    function = ROOT / "functions" / "meta"
    env = {k: v for k, v in os.environ.items() if k != "LAMBDA_TASK_ROOT"}
    if on_lambda:
        env["LAMBDA_TASK_ROOT"] = str(function)
    event = (ROOT / "events" / "meta" / "health.json").read_text()
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(function), str(ROOT / "layers" / "shared"), event],
        capture_output=True, text=True, env=env, cwd=function, check=True, timeout=60,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_on_lambda_the_collector_is_off_until_the_first_invocation_ends_then_frozen():
    answer = _meta_in_a_fresh_process(on_lambda=True)
    assert answer["status"] == 200
    (after_import, after_first, after_second) = answer["states"]
    assert after_import == [False, 0]
    enabled, frozen = after_first
    assert enabled is True and frozen > 10_000  # the modules, classes and functions it built
    assert after_second[0] is True


def test_off_lambda_importing_a_function_leaves_the_collector_alone():
    answer = _meta_in_a_fresh_process(on_lambda=False)
    assert answer["states"] == [[True, 0], [True, 0], [True, 0]]


def _function_modules() -> list[Path]:
    return sorted((ROOT / "functions").glob("*/app.py"))


@pytest.mark.parametrize("app", _function_modules(), ids=lambda path: path.parent.name)
def test_every_function_imports_the_start_up_first(app):
    first = next(
        node for node in ast.parse(app.read_text()).body
        if isinstance(node, ast.Import | ast.ImportFrom)
    )  # fmt: skip
    assert isinstance(first, ast.Import) and first.names[0].name == "warble.startup"
