"""The builders of search (people) and hashtags (tags' timelines and trends)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from warble.services.parts import Parts

if TYPE_CHECKING:
    from warble.domain.hashtags.service import HashtagService
    from warble.domain.search.service import SearchService


def hashtags(c: Parts) -> HashtagService:
    from warble.domain.hashtags.service import HashtagService

    return HashtagService(
        index=c.stores.hashtag_index(),
        trends=c.stores.trends(),
        tweets=c.tweets,
        shields=c.shields,
        muted=c.muted_words,
    )


def search(c: Parts) -> SearchService:
    from warble.domain.search.service import SearchService

    return SearchService(
        index=c.stores.people_index(),
        snapshots=c.stores.snapshots(),
        network=c.graph,
        shields=c.shields,
    )
