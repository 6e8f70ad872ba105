"""Follow graph routes (API.md "Follow graph"): follow, unfollow, lists, statuses, degrees."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from warble import services
from warble.domain.blocks.service import Flags
from warble.http import views
from warble.http.app import principal
from warble.http.docs import responses
from warble.http.params import Cursor, Id, Limit, UserRef, id_or_404, user_or_me
from warble.ids import SNOWFLAKE_PATTERN, parse_id
from warble.schemas.graph import (
    DegreeOut,
    MutualFriendsOut,
    RelationshipOut,
    RelationshipsOut,
    UserPageOut,
)

if TYPE_CHECKING:
    from warble.domain.graph.service import Page

router = Router()

MAX_IDS = 100
_ID = SNOWFLAKE_PATTERN.strip("^$")

UserId = Id


def _user(raw: str, viewer: int, *, allow_me: bool = False) -> int:
    return user_or_me(raw, viewer) if allow_me else id_or_404(raw, "user")


def _page(page: Page, viewer: int) -> dict[str, Any]:
    return views.user_page(page.users, page.next_cursor, viewer)


@router.put(
    "/v1/users/me/following/<user_id>",
    summary="Follow a user (idempotent)",
    responses=responses(
        200,
        RelationshipOut,
        "My relationship to the user now",
        e403="blocked",
        e404="not_found",
        e409="follow_limit_reached",
    ),
)
def follow(user_id: UserId) -> dict[str, Any]:
    me = principal().user_id
    return {"relationship": services.graph().follow(me, _user(user_id, me))}


@router.delete(
    "/v1/users/me/following/<user_id>",
    summary="Unfollow a user (idempotent)",
    responses=responses(200, RelationshipOut, "My relationship to the user now", e404="not_found"),
)
def unfollow(user_id: UserId) -> dict[str, Any]:
    me = principal().user_id
    return {"relationship": services.graph().unfollow(me, _user(user_id, me))}


@router.get(
    "/v1/users/me/relationships",
    summary="My relationship to each of 1 to 100 users, in the order asked",
    responses=responses(200, RelationshipsOut, "Statuses"),
)
def relationships(
    ids: Annotated[
        str,
        Query(
            min_length=1,
            max_length=2099,
            pattern=rf"^{_ID}(,{_ID}){{0,{MAX_IDS - 1}}}$",
            description=f"1 to {MAX_IDS} user ids, comma-separated",
        ),
    ],
) -> dict[str, Any]:
    me = principal().user_id
    raw_ids = ids.split(",")
    # The pattern admits 19 digits past 2**63 - 1: no user has such an id (status none).
    parsed = [parse_id(raw) for raw in raw_ids]
    known = services.blocks().relationships(me, [v for v in parsed if v is not None])
    found = {uid: (status, flags) for uid, status, flags in known}
    none = ("none", Flags())
    items = []
    for raw, value in zip(raw_ids, parsed, strict=True):
        status, flags = none if value is None else found.get(value, none)
        items.append(
            {
                "user_id": raw if value is None else str(value),
                "status": status,
                "blocking": flags.blocking,
                "blocked_by": flags.blocked_by,
                "muting": flags.muting,
            }
        )
    return {"items": items}


@router.get(
    "/v1/users/me/mutual-friends/<user_id>",
    summary="Friends of both me and this user",
    responses=responses(200, MutualFriendsOut, "Mutual friends", e404="not_found"),
)
def mutual_friends(user_id: UserId) -> dict[str, Any]:
    me = principal().user_id
    count, users = services.graph().mutual_friends(me, _user(user_id, me))
    return {"count": count, "items": [views.user(record, viewer_id=me) for record in users]}


@router.get(
    "/v1/users/me/degree/<user_id>",
    summary="Degree of connection on the friends graph (1st, 2nd, 3rd, 3rd+)",
    responses=responses(200, DegreeOut, "The degree", e404="not_found"),
)
def degree(user_id: UserId) -> dict[str, Any]:
    me = principal().user_id
    answer = services.graph().degree(me, _user(user_id, me))
    return {"degree": answer.degree, "label": answer.label}


@router.get(
    "/v1/users/<user_id>/following",
    summary="Whom a user follows, most recent follow first",
    responses=responses(200, UserPageOut, "A page of users", e404="not_found"),
)
def following(user_id: UserRef, limit: Limit = 20, cursor: Cursor = None) -> dict[str, Any]:
    me = principal().user_id
    target = _user(user_id, me, allow_me=True)
    return _page(services.graph().following(me, target, limit, cursor), me)


@router.get(
    "/v1/users/<user_id>/followers",
    summary="Who follows a user, most recent follow first",
    responses=responses(200, UserPageOut, "A page of users", e404="not_found"),
)
def followers(user_id: UserRef, limit: Limit = 20, cursor: Cursor = None) -> dict[str, Any]:
    me = principal().user_id
    target = _user(user_id, me, allow_me=True)
    return _page(services.graph().followers(me, target, limit, cursor), me)


@router.get(
    "/v1/users/<user_id>/friends",
    summary="A user's friends (mutual follows)",
    responses=responses(200, UserPageOut, "A page of users", e404="not_found"),
)
def friends(user_id: UserRef, limit: Limit = 20, cursor: Cursor = None) -> dict[str, Any]:
    me = principal().user_id
    target = _user(user_id, me, allow_me=True)
    return _page(services.graph().friends(me, target, limit, cursor), me)
