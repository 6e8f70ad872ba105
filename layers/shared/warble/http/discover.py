"""Discover routes (API.md "Discover (people nearby)"): location, the nearby feed, swipes,
matches."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from warble import clock, services
from warble.http import views
from warble.http.app import principal
from warble.http.docs import responses
from warble.http.params import Cursor, Limit
from warble.schemas.discover import DiscoverOut, LocationIn, MatchPageOut, SwipeIn, SwipeOut

router = Router()

RadiusKm = Annotated[float, Query(ge=0.1, le=500, allow_inf_nan=False, description="0.1 to 500")]


@router.put(
    "/v1/users/me/location",
    summary="Set (or move) my location; makes me discoverable",
    responses=responses(204, None, "Stored"),
)
def put_location(body: Annotated[LocationIn, Body()]) -> Response[Any]:
    services.discover().set_location(principal().user_id, body.lat, body.lon)
    return Response(status_code=204)


@router.get(
    "/v1/discover",
    summary="People nearby never shown to me before, nearest first",
    responses=responses(200, DiscoverOut, "A page of people", e409="location_required"),
)
def discover(radius_km: RadiusKm = 10, limit: Limit = 20) -> dict[str, Any]:
    me = principal().user_id
    found = services.discover().page(me, radius_km, limit)
    return {
        "items": [
            {**views.user(record, viewer_id=me), "distance_km": record["distance_km"]}
            for record in found
        ]
    }


@router.post(
    "/v1/discover/swipes",
    summary="Swipe left or right on someone (the first swipe on a person stands)",
    responses=responses(200, SwipeOut, "Whether this swipe made a match", e404="not_found"),
)
def swipe(body: Annotated[SwipeIn, Body()]) -> dict[str, Any]:
    answer = services.discover().swipe(principal().user_id, int(body.user_id), body.direction)
    return {"matched": answer.matched, "conversation_id": answer.conversation_id}


@router.get(
    "/v1/discover/matches",
    summary="My matches, newest first",
    responses=responses(200, MatchPageOut, "A page of matches"),
)
def matches(limit: Limit = 20, cursor: Cursor = None) -> dict[str, Any]:
    me = principal().user_id
    page = services.discover().matches(me, limit, cursor)
    return {
        "items": [
            {
                "user": views.user(user, viewer_id=me),
                "conversation_id": conversation_id,
                "matched_at": clock.rfc3339(clock.from_ms(matched_at)),
            }
            for user, conversation_id, matched_at in page.items
        ],
        "next_cursor": page.next_cursor,
    }
