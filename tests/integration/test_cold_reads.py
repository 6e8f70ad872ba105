"""A cold container whose first request finds its data in Redis answers it without importing
the DynamoDB client libraries: the stores behind a service are built on their first use
(``warble.services.Deferred``), and a warm read never uses them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_gate import _get_user
from tests.integration.test_sample_events import Context, _event, _load_function

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import app
class Context:
    function_name, function_version, memory_limit_in_mb = "accounts", "$LATEST", 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:accounts"
    aws_request_id, log_group_name, log_stream_name = "r", "g", "s"
event = json.loads(sys.argv[3])
answer = app.handler(event, Context())
loaded = [name for name in ("pynamodb", "botocore.client") if name in sys.modules]
print(json.dumps({"status": answer["statusCode"], "loaded": loaded}))
"""


def _in_a_fresh_process(name: str, event: dict[str, Any]) -> dict[str, Any]:
    """One invocation of the function in a fresh interpreter, as on AWS: traced (the Tracer
    imports the X-Ray SDK, which off Lambda builds a botocore client of its own). Its status,
    and the store libraries it loaded (``_CHILD``)."""
    function = ROOT / "functions" / name
    env = {k: v for k, v in os.environ.items() if not k.startswith("POWERTOOLS_TRACE")}
    env["LAMBDA_TASK_ROOT"] = str(function)
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(function), str(ROOT / "layers" / "shared"),
         json.dumps(event)],
        capture_output=True, text=True, env=env,
        cwd=function, check=True, timeout=120,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_a_cached_profile_read_in_a_fresh_process_imports_no_dynamodb_client(accounts):
    alice = accounts.signup("alice", "alice@example.com", "correct horse", None, "phone")
    bob = accounts.signup("bob", "bob@example.com", "correct horse", None, "phone")
    handler = _load_function("accounts").handler
    assert _get_user(handler, alice.token, bob.user["id"])["statusCode"] == 200  # all cached
    event = _event("accounts/get-user.json")
    event["headers"]["authorization"] = f"Bearer {alice.token}"
    old = event["pathParameters"]["user_id"]
    event["pathParameters"]["user_id"] = str(bob.user["id"])
    event["rawPath"] = event["rawPath"].replace(old, str(bob.user["id"]))
    answer = _in_a_fresh_process("accounts", event)
    assert answer == {"status": 200, "loaded": []}


def test_cached_unread_counts_in_a_fresh_process_import_no_dynamodb_client(accounts):
    """The unread counts' store in Redis is built without the notifications table's."""
    from tests.integration.test_gate import _unread_counts_event

    alice = accounts.signup("alice", "alice@example.com", "correct horse", None, "phone")
    event = _unread_counts_event(alice.token)
    handler = _load_function("notifications").handler
    for _ in range(2):  # the first builds the counts (reads the table), the second is all cached
        assert handler(json.loads(json.dumps(event)), Context())["statusCode"] == 200
    answer = _in_a_fresh_process("notifications", event)
    assert answer == {"status": 200, "loaded": []}


def test_a_cached_home_page_in_a_fresh_process_imports_no_dynamodb_client(accounts):
    """The home page's blocks and mutes come from Redis: the graph table's store behind them is
    built only for a miss."""
    alice = accounts.signup("alice", "alice@example.com", "correct horse", None, "phone")
    event = _event("tweets/home.json")
    event["headers"]["authorization"] = f"Bearer {alice.token}"
    handler = _load_function("tweets").handler
    for _ in range(2):  # the first builds the timeline and the hashes, the second is cached
        assert handler(json.loads(json.dumps(event)), Context())["statusCode"] == 200
    answer = _in_a_fresh_process("tweets", event)
    assert answer == {"status": 200, "loaded": []}
