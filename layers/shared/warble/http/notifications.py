"""Notification routes (API.md "Notifications and unread counts")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from warble import services
from warble.domain.notifications import COUNT_TYPES, LIST_TYPES, parse_types
from warble.http import schemas
from warble.http.app import first_reads, principal, reads_first
from warble.http.docs import responses
from warble.http.params import Cursor, Limit

if TYPE_CHECKING:
    from warble.domain.ports import Later, ReadBatch

router = Router()

_TYPE = f"({'|'.join(LIST_TYPES)})"
Types = Annotated[
    str | None,
    Query(
        max_length=200,
        pattern=rf"^{_TYPE}(,{_TYPE})*$",
        description=f"comma-separated: {', '.join(LIST_TYPES)}",
    ),
]


@router.get(
    "/v1/notifications",
    summary="My notifications, newest first",
    responses=responses(200, schemas.NotificationPageOut, "A page of notifications"),
)
def list_notifications(types: Types = None, limit: Limit = 20, cursor: Cursor = None) -> dict:
    kinds = parse_types(types, LIST_TYPES)
    page = services.notifications().page(principal().user_id, kinds, limit, cursor)
    return {"items": page.items, "next_cursor": page.next_cursor}


def _counts_reads(batch: ReadBatch, viewer: int) -> Later[dict[str, int]]:
    return services.notifications().counts_later(batch, viewer)


@router.get(
    "/v1/notifications/unread-counts",
    summary="My unread counts per type, and their total",
    responses=responses(200, schemas.UnreadCountsOut, "The counts"),
)
@reads_first(_counts_reads)
def unread_counts() -> dict[str, int]:
    result: dict[str, int] = first_reads(_counts_reads, principal().user_id)
    return result


@router.post(
    "/v1/notifications/read",
    summary="Mark some types (or all) read: their counts become 0",
    responses=responses(204, None, "Marked read"),
)
def mark_read(body: Annotated[schemas.MarkRead, Body()]) -> Response[Any]:
    kinds: list[str] = list(COUNT_TYPES) if body.all else list(dict.fromkeys(body.types or []))
    services.notifications().mark_read(principal().user_id, kinds)
    return Response(status_code=204)


@router.post(
    "/v1/admin/system-notifications",
    summary="Send a system notification to every user (admins only)",
    responses=responses(201, schemas.NotificationOut, "Sent", e403="forbidden"),
)
def post_system(body: Annotated[schemas.SystemNotificationIn, Body()]) -> Response[Any]:
    sent = services.notifications().post_system(principal().user_id, body.title, body.body)
    return Response(status_code=201, content_type="application/json", body=sent)
