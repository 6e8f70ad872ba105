"""The export route (API.md "Accounts", ``GET /v1/users/me/export``)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.api_gateway import Router

from warble import services
from warble.domain.export.answers import Export
from warble.http.app import principal
from warble.http.docs import responses

router = Router()


@router.get(
    "/v1/users/me/export",
    summary="Everything Warble holds about me, as one JSON document (every list complete)",
    responses=responses(200, Export, "The export"),
)
def export_me() -> Export:
    me = principal()
    return services.export().export(me.user_id, me.session_id)
