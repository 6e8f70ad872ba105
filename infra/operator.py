"""The operator's commands against a deployed stack; each invokes OperatorFunction.

    python -m infra.operator create-admin --stack-name warble --username warble_admin \\
        --email ops@example.com
    python -m infra.operator rebuild-discover-index --stack-name warble
    python -m infra.operator sweep-moved-slots --stack-name warble

``create-admin`` reads the password from WARBLE_ADMIN_PASSWORD, else asks for it (never from
the command line, where it would stay in the shell's history and the process list). The account
must be named in the stack's AdminUsernames; one already holding the name is reported, not
changed. ``sweep-moved-slots``, after a cache's move (docs/deploying.md), removes from every
cache node the keys of slots that moved to another cache, an invocation at a time per node.
AWS credentials and region come from the usual places (AWS_PROFILE, AWS_REGION, ...).
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from typing import Any


def invoke(stack_name: str, payload: dict[str, Any], region: str | None = None) -> dict[str, Any]:
    """OperatorFunction's answer to ``payload`` (its name: ``<stack>-operator``)."""
    import boto3

    client = boto3.client("lambda", region_name=region)
    answer = client.invoke(
        FunctionName=f"{stack_name}-operator", Payload=json.dumps(payload).encode()
    )
    body: dict[str, Any] = json.loads(answer["Payload"].read() or b"{}")
    if answer.get("FunctionError"):
        raise SystemExit(f"OperatorFunction failed: {body.get('errorMessage', body)}")
    return body


def _password() -> str:
    password = os.environ.get("WARBLE_ADMIN_PASSWORD") or getpass.getpass("Admin password: ")
    if not 8 <= len(password.encode()) <= 72:
        raise SystemExit("the password must be 8 to 72 bytes (API.md)")
    return password


def sweep_moved_slots(stack_name: str, region: str | None) -> int:
    """Every primary swept to its end, an invocation after another (each about the function's
    timeout less 10 s); prints what each node lost."""
    nodes = invoke(stack_name, {"task": "sweep_moved_slots"}, region)["nodes"]
    for node in nodes:
        cursor, removed = None, 0
        while cursor != 0:
            step = {"task": "sweep_moved_slots", "node": node, "cursor": cursor or 0}
            answer = invoke(stack_name, step, region)
            cursor, removed = answer["cursor"], removed + answer["removed"]
        print(json.dumps({"node": node, "removed": removed}))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m infra.operator",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--stack-name", required=True)
    parser.add_argument("--region", default=None)
    commands = parser.add_subparsers(dest="command", required=True)
    admin = commands.add_parser("create-admin", help="create an admin's account")
    admin.add_argument("--username", required=True)
    admin.add_argument("--email", required=True)
    commands.add_parser("rebuild-discover-index", help="Discover's index from stored locations")
    commands.add_parser("sweep-moved-slots", help="the keys a cache's move left behind, removed")
    args = parser.parse_args(argv)
    if args.command == "sweep-moved-slots":
        return sweep_moved_slots(args.stack_name, args.region)
    if args.command == "create-admin":
        payload = {"task": "create_admin", "username": args.username, "email": args.email,
                   "password": _password()}  # fmt: skip
    else:
        payload = {"task": "rebuild_discover_index"}
    answer = invoke(args.stack_name, payload, args.region)
    print(json.dumps(answer))
    return 1 if "error" in answer else 0


if __name__ == "__main__":
    sys.exit(main())
