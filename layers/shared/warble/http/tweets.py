"""Tweet routes (API.md "Tweets and timelines"): tweets, retweets, replies, timelines, likes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from warble import services
from warble.domain.accounts.answers import UserPage
from warble.domain.likes.answers import LikeAnswer
from warble.domain.tweets.answers import Tweet, TweetAnswer, TweetPage
from warble.http.app import first_reads, principal, reads_first, request_key
from warble.http.docs import responses
from warble.http.params import Cursor, Id, Limit, UserRef, id_or_404, user_or_me
from warble.schemas.tweets import CreateTweet

if TYPE_CHECKING:
    from warble.domain.shared import Later, ReadBatch

router = Router()


@router.post(
    "/v1/tweets",
    summary="Post a tweet or a reply",
    responses=responses(
        201,
        Tweet,
        "Created",
        e400="validation_error, invalid_media",
        e403="blocked",
        e404="reply_to does not exist",
    ),
)
def post_tweet(body: Annotated[CreateTweet, Body()]) -> Response[Any]:
    reply_to = int(body.reply_to) if body.reply_to else None
    tweet = services.tweets().post(
        principal().user_id, body.text, reply_to, body.media_ids, request_key()
    )
    return Response(status_code=201, content_type="application/json", body=tweet)


@router.get(
    "/v1/tweets/<tweet_id>",
    summary="A tweet",
    responses=responses(200, Tweet, "The tweet", e404="not_found"),
)
def get_tweet(tweet_id: Id) -> TweetAnswer:
    return services.tweets().get(principal().user_id, id_or_404(tweet_id, "tweet"))


@router.delete(
    "/v1/tweets/<tweet_id>",
    summary="Delete my tweet",
    responses=responses(204, None, "Deleted", e403="forbidden", e404="not_found"),
)
def delete_tweet(tweet_id: Id) -> Response[Any]:
    services.tweets().delete(principal().user_id, id_or_404(tweet_id, "tweet"))
    return Response(status_code=204)


@router.get(
    "/v1/tweets/<tweet_id>/replies",
    summary="Replies to a tweet, newest first",
    responses=responses(200, TweetPage, "A page of replies", e404="not_found"),
)
def replies(tweet_id: Id, limit: Limit = 20, cursor: Cursor = None) -> TweetPage:
    return services.tweets().replies(
        principal().user_id, id_or_404(tweet_id, "tweet"), limit, cursor
    )


@router.get(
    "/v1/users/<user_id>/tweets",
    summary="A user's tweets, replies and retweets, newest first",
    responses=responses(200, TweetPage, "A page of tweets", e404="not_found"),
)
def user_tweets(user_id: UserRef, limit: Limit = 20, cursor: Cursor = None) -> TweetPage:
    me = principal().user_id
    return services.tweets().user_timeline(me, user_or_me(user_id, me), limit, cursor)


@router.post(
    "/v1/tweets/<tweet_id>/retweet",
    summary="Retweet (201), or get my existing retweet (200)",
    responses={
        **responses(201, Tweet, "Retweeted", e403="blocked", e404="not_found"),
        **responses(200, Tweet, "Retweeted before: my existing retweet"),
    },
)
def retweet(tweet_id: Id) -> Response[Any]:
    tweet, created = services.tweets().retweet(principal().user_id, id_or_404(tweet_id, "tweet"))
    return Response(
        status_code=201 if created else 200, content_type="application/json", body=tweet
    )


@router.delete(
    "/v1/tweets/<tweet_id>/retweet",
    summary="Undo my retweet",
    responses=responses(204, None, "Not retweeted (any more)", e404="not_found"),
)
def unretweet(tweet_id: Id) -> Response[Any]:
    services.tweets().unretweet(principal().user_id, id_or_404(tweet_id, "tweet"))
    return Response(status_code=204)


def _home_reads(batch: ReadBatch, viewer: int, limit: int, cursor: str | None) -> Later[TweetPage]:
    return services.timelines().home_later(batch, viewer, limit, cursor)


@router.get(
    "/v1/timeline/home",
    summary="My home timeline: me and everyone I follow, newest first",
    responses=responses(200, TweetPage, "A page of tweets"),
)
@reads_first(_home_reads)
def home_timeline(limit: Limit = 20, cursor: Cursor = None) -> TweetPage:
    return first_reads(_home_reads, principal().user_id, limit=limit, cursor=cursor)


@router.put(
    "/v1/tweets/<tweet_id>/like",
    summary="Like a tweet (idempotent)",
    responses=responses(200, LikeAnswer, "Liked", e403="blocked", e404="not_found"),
)
def like(tweet_id: Id) -> LikeAnswer:
    return LikeAnswer(services.likes().like(principal().user_id, id_or_404(tweet_id, "tweet")))


@router.delete(
    "/v1/tweets/<tweet_id>/like",
    summary="Undo my like (idempotent)",
    responses=responses(200, LikeAnswer, "Not liked (any more)", e404="not_found"),
)
def unlike(tweet_id: Id) -> LikeAnswer:
    return LikeAnswer(services.likes().unlike(principal().user_id, id_or_404(tweet_id, "tweet")))


@router.get(
    "/v1/tweets/<tweet_id>/likes",
    summary="Who liked a tweet, most recent like first",
    responses=responses(200, UserPage, "A page of users", e404="not_found"),
)
def likers(tweet_id: Id, limit: Limit = 20, cursor: Cursor = None) -> UserPage:
    return services.likes().likers(principal().user_id, id_or_404(tweet_id, "tweet"), limit, cursor)


@router.get(
    "/v1/users/<user_id>/likes",
    summary="The tweets a user liked, most recent like first",
    responses=responses(200, TweetPage, "A page of tweets", e404="not_found"),
)
def liked_tweets(user_id: UserRef, limit: Limit = 20, cursor: Cursor = None) -> TweetPage:
    me = principal().user_id
    return services.likes().liked_tweets(me, user_or_me(user_id, me), limit, cursor)
