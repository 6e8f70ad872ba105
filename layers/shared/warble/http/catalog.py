"""Every feature router of the HTTP API, for the OpenAPI document (``warble.http.meta``, whose own
router joins these there) and the 404/405 catch-all."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.api_gateway import Router


def all_routers() -> list[Router]:
    from warble.http import (
        accounts,
        blocks,
        conversations,
        discover,
        export,
        graph,
        media,
        muted_words,
        notifications,
        reports,
        search,
        suspensions,
        tweets,
    )

    return [
        accounts.router,
        graph.router,
        blocks.router,
        muted_words.router,
        tweets.router,
        media.router,
        notifications.router,
        reports.router,
        conversations.router,
        discover.router,
        search.router,
        export.router,
        suspensions.router,
    ]
