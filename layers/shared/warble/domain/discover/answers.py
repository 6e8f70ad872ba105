"""What Discover answers (API.md's objects): people nearby, a swipe's outcome, matches."""

from __future__ import annotations

from dataclasses import dataclass

from warble.domain.accounts.answers import RelatedUser
from warble.domain.shared import Page


@dataclass(slots=True)
class Location:
    """A user's own location as set (``PUT /v1/users/me/location``): the export's."""

    lat: float
    lon: float


@dataclass(slots=True)
class NearbyUser(RelatedUser):
    """A discovered user and how far: whole kilometres, at least one, from the viewer to the
    user's ~1 km grid cell (``warble.domain.discover.geo``)."""

    distance_km: int


@dataclass(slots=True)
class NearbyUsers:
    """A Discover page: people never shown before, nearest first (no cursor: the next request
    continues where this one stopped; empty when everyone nearby has been shown)."""

    items: list[NearbyUser]


@dataclass(slots=True)
class SwipeAnswer:
    """Whether this swipe made the match, and then the pair's conversation."""

    matched: bool
    conversation_id: str | None


@dataclass(slots=True)
class Match:
    user: RelatedUser  # never the viewer: always with the viewer's relationship
    conversation_id: str
    matched_at: str


@dataclass(slots=True)
class MatchPage(Page[Match]):
    items: list[Match]
