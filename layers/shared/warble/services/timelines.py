"""The home timelines' builder."""

from __future__ import annotations

from typing import TYPE_CHECKING

from warble.services.parts import Parts

if TYPE_CHECKING:
    from warble.domain.timelines.service import TimelineService


def timelines(c: Parts) -> TimelineService:
    from warble.domain.timelines.service import TimelinePolicy, TimelineService

    s = c.settings
    return TimelineService(
        timelines=c.stores.timelines(),
        tweets=c.tweets,
        graph=c.graph,
        policy=TimelinePolicy(
            celebrity_followers=s.celebrity_followers,
            cap=s.timeline_cap,
            recent_cap=s.author_recent_cap,
            backfill=s.follow_backfill,
        ),
        shields=c.shields,
        muted=c.muted_words,
        followers=c.stores.memberships("followers"),
    )
