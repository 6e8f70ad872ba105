"""Muted words routes (API.md "Reports and moderation"): read and replace my list."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from warble import services
from warble.domain.muted_words.answers import MutedWords
from warble.http.app import principal
from warble.http.docs import responses
from warble.schemas.muted_words import MutedWordsIn

router = Router()


@router.get(
    "/v1/users/me/muted-words",
    summary="My muted words",
    responses=responses(200, MutedWords, "The list"),
)
def muted_words() -> MutedWords:
    return services.muted_words().words(principal().user_id)


@router.put(
    "/v1/users/me/muted-words",
    summary="Replace my muted words: tweets holding one leave my home timeline, hashtag pages, "
    "replies lists and mention and reply notifications from my next request",
    responses=responses(200, MutedWords, "The list as stored (trimmed, repeats dropped)"),
)
def replace_muted_words(body: Annotated[MutedWordsIn, Body()]) -> MutedWords:
    return services.muted_words().replace(principal().user_id, body.words)
