"""Block and mute routes (API.md "Blocks and mutes"): block, unblock, mute, unmute, the lists."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import Router

from warble import services
from warble.http import views
from warble.http.app import principal
from warble.http.docs import responses
from warble.http.params import Cursor, Id, Limit, id_or_404
from warble.schemas.graph import BlockingOut, MutingOut, UserPageOut

router = Router()


@router.put(
    "/v1/users/me/blocks/<user_id>",
    summary="Block a user (idempotent): ends every follow between us, both ways",
    responses=responses(200, BlockingOut, "Blocking", e404="not_found"),
)
def block(user_id: Id) -> dict[str, Any]:
    me = principal().user_id
    return {"blocking": services.blocks().block(me, id_or_404(user_id, "user"))}


@router.delete(
    "/v1/users/me/blocks/<user_id>",
    summary="Unblock a user (idempotent); no follow comes back",
    responses=responses(200, BlockingOut, "Not blocking", e404="not_found"),
)
def unblock(user_id: Id) -> dict[str, Any]:
    me = principal().user_id
    return {"blocking": services.blocks().unblock(me, id_or_404(user_id, "user"))}


@router.get(
    "/v1/users/me/blocks",
    summary="The users I block, most recent block first",
    responses=responses(200, UserPageOut, "A page of users"),
)
def blocks(limit: Limit = 20, cursor: Cursor = None) -> dict[str, Any]:
    me = principal().user_id
    page = services.blocks().listed(me, "blocks", limit, cursor)
    return views.user_page(page.users, page.next_cursor, me)


@router.put(
    "/v1/users/me/mutes/<user_id>",
    summary="Mute a user (idempotent): their tweets leave my home timeline, their actions "
    "notify me no more",
    responses=responses(200, MutingOut, "Muting", e404="not_found"),
)
def mute(user_id: Id) -> dict[str, Any]:
    me = principal().user_id
    return {"muting": services.blocks().mute(me, id_or_404(user_id, "user"))}


@router.delete(
    "/v1/users/me/mutes/<user_id>",
    summary="Unmute a user (idempotent)",
    responses=responses(200, MutingOut, "Not muting", e404="not_found"),
)
def unmute(user_id: Id) -> dict[str, Any]:
    me = principal().user_id
    return {"muting": services.blocks().unmute(me, id_or_404(user_id, "user"))}


@router.get(
    "/v1/users/me/mutes",
    summary="The users I mute, most recent mute first",
    responses=responses(200, UserPageOut, "A page of users"),
)
def mutes(limit: Limit = 20, cursor: Cursor = None) -> dict[str, Any]:
    me = principal().user_id
    page = services.blocks().listed(me, "mutes", limit, cursor)
    return views.user_page(page.users, page.next_cursor, me)
