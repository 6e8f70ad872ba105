"""Search and hashtag routes (API.md "Search and hashtags"): people search, a hashtag's
timeline, trends."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from warble import services
from warble.domain.hashtags.ports import Trends
from warble.domain.search.ports import FoundPage
from warble.domain.tweets.answers import TweetPage
from warble.errors import FieldError, NotFound, ValidationFailed, WarbleError
from warble.http.app import first_reads, principal, reads_first
from warble.http.docs import responses
from warble.http.params import Cursor, Limit

if TYPE_CHECKING:
    from warble.domain.shared import Later, ReadBatch

router = Router()

SearchQuery = Annotated[
    str,
    Query(
        min_length=1,
        max_length=200,
        description="1 to 50 characters after trimming; a leading @ is ignored",
    ),
]
Tag = Annotated[
    str,
    Path(
        min_length=1,
        max_length=200,
        description="a hashtag without #: 1 to 50 letters, digits or _, not all digits (any case)",
    ),
]


def _search_reads(
    batch: ReadBatch, viewer: int, q: str, limit: int, cursor: str | None
) -> Later[FoundPage]:
    return services.search().people_later(batch, viewer, q, limit, cursor)


@router.get(
    "/v1/search/users",
    summary="People search: username or display-name word prefix, ranked by degree",
    responses=responses(200, FoundPage, "A page of Users, each with its degree"),
)
@reads_first(_search_reads)
def search_users(q: SearchQuery, limit: Limit = 20, cursor: Cursor = None) -> FoundPage:
    return first_reads(_search_reads, principal().user_id, q=q, limit=limit, cursor=cursor)


def _hashtag_reads(
    batch: ReadBatch, viewer: int, tag: str, limit: int, cursor: str | None
) -> Later[TweetPage]:
    return services.hashtags().timeline_later(batch, viewer, tag, limit, cursor)


@router.get(
    "/v1/hashtags/<tag>/tweets",
    summary="A hashtag's tweets, newest first",
    responses=responses(200, TweetPage, "A page of tweets"),
)
@reads_first(_hashtag_reads)
def hashtag_tweets(tag: Tag, limit: Limit = 20, cursor: Cursor = None) -> TweetPage:
    viewer = principal().user_id
    return first_reads(_hashtag_reads, viewer, tag=tag, limit=limit, cursor=cursor)


@router.get(
    "/v1/trends",
    summary="The hashtags of the last hour, by distinct authors then tweets (at most 10)",
    responses=responses(200, Trends, "Trends"),
)
def trends() -> Trends:
    return services.hashtags().trends()


def unmatched(method: str, path: str) -> WarbleError:
    """A hashtag path whose tag the route's pattern refuses (a ``/``, ``#`` or emoji, sent
    percent-encoded): API Gateway routed it here by its segments, and an invalid tag is a 400
    (API.md), not an unknown path."""
    if method == "GET" and path.startswith("/v1/hashtags/") and path.endswith("/tweets"):
        return ValidationFailed(
            [FieldError("tag", "must be 1 to 50 letters, digits or _, not all digits")]
        )
    return NotFound("No such path.")
