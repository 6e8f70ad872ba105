"""Discover routes (API.md "Discover (people nearby)"): location, the nearby feed, swipes,
matches."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from warble import services
from warble.domain.discover.answers import MatchPage, NearbyUsers, SwipeAnswer
from warble.errors import RateLimited
from warble.http.app import principal
from warble.http.docs import responses
from warble.http.params import Cursor, Limit
from warble.schemas.discover import LocationIn, SwipeIn

router = Router()

RadiusKm = Annotated[float, Query(ge=0.1, le=500, allow_inf_nan=False, description="0.1 to 500")]


@router.put(
    "/v1/users/me/location",
    summary="Set (or move) my location; makes me discoverable",
    description="At most 30 updates per 5 minutes per user, beside the request budget: past"
    " them 429 rate_limited with Retry-After, and the location stays as it was.",
    responses=responses(204, None, "Stored"),
)
def put_location(body: Annotated[LocationIn, Body()]) -> Response[Any]:
    me = principal().user_id
    spent = services.rate_limits().location(me)
    if spent is not None and not spent.allowed:
        raise RateLimited(spent.retry_after, "Too many location updates; try again later.")
    services.discover().set_location(me, body.lat, body.lon)
    return Response(status_code=204)


@router.get(
    "/v1/discover",
    summary="People nearby never shown to me before, nearest first",
    responses=responses(200, NearbyUsers, "A page of people", e409="location_required"),
)
def discover(radius_km: RadiusKm = 10, limit: Limit = 20) -> NearbyUsers:
    return services.discover().page(principal().user_id, radius_km, limit)


@router.post(
    "/v1/discover/swipes",
    summary="Swipe left or right on someone (the first swipe on a person stands)",
    responses=responses(200, SwipeAnswer, "Whether this swipe made a match", e404="not_found"),
)
def swipe(body: Annotated[SwipeIn, Body()]) -> SwipeAnswer:
    return services.discover().swipe(principal().user_id, int(body.user_id), body.direction)


@router.get(
    "/v1/discover/matches",
    summary="My matches, newest first",
    responses=responses(200, MatchPage, "A page of matches"),
)
def matches(limit: Limit = 20, cursor: Cursor = None) -> MatchPage:
    return services.discover().matches(principal().user_id, limit, cursor)
