"""The operator's tasks, run by OperatorFunction when infra/operator.py invokes it (locally the
stack runs ``create_admin`` as it starts): nothing triggers it otherwise.

- ``{"task": "create_admin", "username", "email", "password"}``: an admin's account (its
  username is one of ADMIN_USERNAMES, which the API refuses to sign up);
- ``{"task": "rebuild_discover_index"}``: every stored location back into Discover's index at
  its grid cell's centre;
- ``{"task": "sweep_moved_slots"}``: the caches' primaries; ``{"task": "sweep_moved_slots",
  "node": "host:port", "cursor": n}``: the keys a cache's move left on that node removed, for
  as long as the invocation allows, and the cursor to go on from (``warble.dal.slot_sweep``).

The password arrives in the invocation's payload, which Lambda does not log, and is never
logged here.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import services
from warble.errors import Conflict
from warble.skeleton import entry_point, logger


def create_admin(event: dict[str, Any]) -> dict[str, Any]:
    username = str(event["username"])
    try:
        user_id, created = services.accounts().create_admin(
            username, str(event["email"]), str(event["password"])
        )
    except Conflict as exc:
        return {"task": "create_admin", "username": username, "error": exc.code}
    logger.info("admin account", extra={"username": username, "newly_created": created})
    return {"task": "create_admin", "username": username, "user_id": str(user_id),
            "created": created}  # fmt: skip


def rebuild_discover_index(event: dict[str, Any]) -> dict[str, Any]:
    return {"task": "rebuild_discover_index", "placed": services.discover().rebuild_index()}


def sweep_moved_slots(event: dict[str, Any], seconds: float) -> dict[str, Any]:
    from warble.services import slot_sweep

    if not event.get("node"):
        return {"task": "sweep_moved_slots", "nodes": slot_sweep.primaries()}
    node = str(event["node"])
    cursor, removed = slot_sweep.sweep(node, int(event.get("cursor") or 0), seconds)
    return {"task": "sweep_moved_slots", "node": node, "cursor": cursor, "removed": removed}


TASKS = {"create_admin": create_admin, "rebuild_discover_index": rebuild_discover_index}
# The sweep keeps 10 s of the invocation's time to answer in.
SWEEP_MARGIN_MS = 10_000


@entry_point()
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("task") == "sweep_moved_slots":
        seconds = max(1.0, (context.get_remaining_time_in_millis() - SWEEP_MARGIN_MS) / 1000)
        return sweep_moved_slots(event, seconds)
    task = TASKS.get(str(event.get("task")))
    if task is None:
        known = ", ".join([*TASKS, "sweep_moved_slots"])
        raise ValueError(f"unknown task {event.get('task')!r}; known: {known}")
    return task(event)
