"""Follow graph routes (API.md "Follow graph"): follow, unfollow, lists, statuses, degrees."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from warble import services
from warble.domain.accounts.answers import UserPage
from warble.domain.graph.answers import Degree, MutualFriends, RelationshipNow, Relationships
from warble.http.app import principal
from warble.http.docs import responses
from warble.http.params import Cursor, Id, Limit, UserRef, id_or_404, user_or_me
from warble.ids import SNOWFLAKE_PATTERN

router = Router()

MAX_IDS = 100
_ID = SNOWFLAKE_PATTERN.strip("^$")

UserId = Id


def _user(raw: str, viewer: int, *, allow_me: bool = False) -> int:
    return user_or_me(raw, viewer) if allow_me else id_or_404(raw, "user")


@router.put(
    "/v1/users/me/following/<user_id>",
    summary="Follow a user (idempotent)",
    responses=responses(
        200,
        RelationshipNow,
        "My relationship to the user now",
        e403="blocked",
        e404="not_found",
        e409="follow_limit_reached",
    ),
)
def follow(user_id: UserId) -> RelationshipNow:
    me = principal().user_id
    return services.graph().follow(me, _user(user_id, me))


@router.delete(
    "/v1/users/me/following/<user_id>",
    summary="Unfollow a user (idempotent)",
    responses=responses(200, RelationshipNow, "My relationship to the user now", e404="not_found"),
)
def unfollow(user_id: UserId) -> RelationshipNow:
    me = principal().user_id
    return services.graph().unfollow(me, _user(user_id, me))


@router.get(
    "/v1/users/me/relationships",
    summary="My relationship to each of 1 to 100 users, in the order asked",
    responses=responses(200, Relationships, "Statuses"),
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
) -> Relationships:
    # The pattern admits 19 digits past 2**63 - 1: no user has such an id (status none).
    return services.blocks().relationships(principal().user_id, ids.split(","))


@router.get(
    "/v1/users/me/mutual-friends/<user_id>",
    summary="Friends of both me and this user",
    responses=responses(200, MutualFriends, "Mutual friends", e404="not_found"),
)
def mutual_friends(user_id: UserId) -> MutualFriends:
    me = principal().user_id
    return services.graph().mutual_friends(me, _user(user_id, me))


@router.get(
    "/v1/users/me/degree/<user_id>",
    summary="Degree of connection on the friends graph (1st, 2nd, 3rd, 3rd+)",
    responses=responses(200, Degree, "The degree", e404="not_found"),
)
def degree(user_id: UserId) -> Degree:
    me = principal().user_id
    return services.graph().degree(me, _user(user_id, me))


@router.get(
    "/v1/users/<user_id>/following",
    summary="Whom a user follows, most recent follow first",
    responses=responses(200, UserPage, "A page of users", e404="not_found"),
)
def following(user_id: UserRef, limit: Limit = 20, cursor: Cursor = None) -> UserPage:
    me = principal().user_id
    target = _user(user_id, me, allow_me=True)
    return services.graph().following(me, target, limit, cursor)


@router.get(
    "/v1/users/<user_id>/followers",
    summary="Who follows a user, most recent follow first",
    responses=responses(200, UserPage, "A page of users", e404="not_found"),
)
def followers(user_id: UserRef, limit: Limit = 20, cursor: Cursor = None) -> UserPage:
    me = principal().user_id
    target = _user(user_id, me, allow_me=True)
    return services.graph().followers(me, target, limit, cursor)


@router.get(
    "/v1/users/<user_id>/friends",
    summary="A user's friends (mutual follows)",
    responses=responses(200, UserPage, "A page of users", e404="not_found"),
)
def friends(user_id: UserRef, limit: Limit = 20, cursor: Cursor = None) -> UserPage:
    me = principal().user_id
    target = _user(user_id, me, allow_me=True)
    return services.graph().friends(me, target, limit, cursor)
