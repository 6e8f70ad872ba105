"""Notification routes (API.md "Notifications and unread counts")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from warble import services
from warble.domain.notifications.answers import Notification, NotificationPage, UnreadCounts
from warble.domain.notifications.service import COUNT_TYPES, LIST_TYPES, parse_types
from warble.http.app import first_reads, principal, reads_first
from warble.http.docs import responses
from warble.http.params import Cursor, Limit
from warble.schemas.notifications import MarkRead, SystemNotificationIn

if TYPE_CHECKING:
    from warble.domain.shared import Later, ReadBatch

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
    responses=responses(200, NotificationPage, "A page of notifications"),
)
def list_notifications(
    types: Types = None, limit: Limit = 20, cursor: Cursor = None
) -> NotificationPage:
    kinds = parse_types(types, LIST_TYPES)
    return services.notifications().page(principal().user_id, kinds, limit, cursor)


def _counts_reads(batch: ReadBatch, viewer: int) -> Later[UnreadCounts]:
    return services.notifications().counts_later(batch, viewer)


@router.get(
    "/v1/notifications/unread-counts",
    summary="My unread counts per type, and their total",
    responses=responses(200, UnreadCounts, "The counts"),
)
@reads_first(_counts_reads)
def unread_counts() -> UnreadCounts:
    result: UnreadCounts = first_reads(_counts_reads, principal().user_id)
    return result


@router.post(
    "/v1/notifications/read",
    summary="Mark some types (or all) read: their counts become 0",
    responses=responses(204, None, "Marked read"),
)
def mark_read(body: Annotated[MarkRead, Body()]) -> Response[Any]:
    kinds: list[str] = list(COUNT_TYPES) if body.all else list(dict.fromkeys(body.types or []))
    services.notifications().mark_read(principal().user_id, kinds)
    return Response(status_code=204)


@router.post(
    "/v1/admin/system-notifications",
    summary="Send a system notification to every user (admins only)",
    responses=responses(201, Notification, "Sent", e403="forbidden"),
)
def post_system(body: Annotated[SystemNotificationIn, Body()]) -> Response[Any]:
    sent = services.notifications().post_system(principal().user_id, body.title, body.body)
    return Response(status_code=201, content_type="application/json", body=sent)
