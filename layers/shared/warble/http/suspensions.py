"""Suspension routes (API.md "Reports and moderation"): a moderator suspends an account or
lifts its suspension."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.api_gateway import Router

from warble import services
from warble.domain.suspensions.answers import Suspension
from warble.http.app import principal
from warble.http.docs import responses
from warble.http.params import Id, id_or_404

router = Router()


@router.put(
    "/v1/admin/users/<user_id>/suspension",
    summary="Suspend an account (moderators only; idempotent): its sessions end, it is a 404 to"
    " everyone and its tweets leave every timeline until the suspension is lifted",
    responses=responses(200, Suspension, "Suspended", e403="forbidden", e404="not_found"),
)
def suspend(user_id: Id) -> Suspension:
    return services.suspensions().suspend(principal().user_id, id_or_404(user_id, "user"))


@router.delete(
    "/v1/admin/users/<user_id>/suspension",
    summary="Lift an account's suspension (moderators only; idempotent)",
    responses=responses(200, Suspension, "Not suspended", e403="forbidden", e404="not_found"),
)
def lift(user_id: Id) -> Suspension:
    return services.suspensions().lift(principal().user_id, id_or_404(user_id, "user"))
