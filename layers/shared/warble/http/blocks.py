"""Block and mute routes (API.md "Blocks and mutes"): block, unblock, mute, unmute, the lists."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.api_gateway import Router

from warble import services
from warble.domain.accounts.answers import UserPage
from warble.domain.blocks.answers import Blocking, Muting
from warble.http.app import principal
from warble.http.docs import responses
from warble.http.params import Cursor, Id, Limit, id_or_404

router = Router()


@router.put(
    "/v1/users/me/blocks/<user_id>",
    summary="Block a user (idempotent): ends every follow between us, both ways",
    responses=responses(200, Blocking, "Blocking", e404="not_found"),
)
def block(user_id: Id) -> Blocking:
    me = principal().user_id
    return services.blocks().block(me, id_or_404(user_id, "user"))


@router.delete(
    "/v1/users/me/blocks/<user_id>",
    summary="Unblock a user (idempotent); no follow comes back",
    responses=responses(200, Blocking, "Not blocking", e404="not_found"),
)
def unblock(user_id: Id) -> Blocking:
    me = principal().user_id
    return services.blocks().unblock(me, id_or_404(user_id, "user"))


@router.get(
    "/v1/users/me/blocks",
    summary="The users I block, most recent block first",
    responses=responses(200, UserPage, "A page of users"),
)
def blocks(limit: Limit = 20, cursor: Cursor = None) -> UserPage:
    return services.blocks().listed(principal().user_id, "blocks", limit, cursor)


@router.put(
    "/v1/users/me/mutes/<user_id>",
    summary="Mute a user (idempotent): their tweets leave my home timeline, their actions "
    "notify me no more",
    responses=responses(200, Muting, "Muting", e404="not_found"),
)
def mute(user_id: Id) -> Muting:
    me = principal().user_id
    return services.blocks().mute(me, id_or_404(user_id, "user"))


@router.delete(
    "/v1/users/me/mutes/<user_id>",
    summary="Unmute a user (idempotent)",
    responses=responses(200, Muting, "Not muting", e404="not_found"),
)
def unmute(user_id: Id) -> Muting:
    me = principal().user_id
    return services.blocks().unmute(me, id_or_404(user_id, "user"))


@router.get(
    "/v1/users/me/mutes",
    summary="The users I mute, most recent mute first",
    responses=responses(200, UserPage, "A page of users"),
)
def mutes(limit: Limit = 20, cursor: Cursor = None) -> UserPage:
    return services.blocks().listed(principal().user_id, "mutes", limit, cursor)
