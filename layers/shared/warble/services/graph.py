"""The follow graph's builders: the graph service, every user's shields (blocks and mutes read
from memory), the block service, and muted words (read beside the shields)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from warble import keys
from warble.services.parts import Parts

if TYPE_CHECKING:
    from warble.domain.blocks.service import BlockService, Shields
    from warble.domain.graph.service import GraphService
    from warble.domain.muted_words.service import MutedWordService


def _first_page_key(subject: tuple[int, str]) -> keys.CacheKey:
    return keys.first_page(*subject)


def graph(c: Parts) -> GraphService:
    from warble.domain.graph.service import GraphPolicy, GraphService

    s, stores = c.settings, c.stores
    return GraphService(
        store=stores.graph(),
        counters=stores.counters(),
        profiles=c.profiles,
        counts_cache=stores.cache(s.counts_cache_ttl_seconds, keys.counts),
        page_cache=stores.cache(s.first_page_cache_ttl_seconds, _first_page_key),
        ids=c.ids,
        policy=GraphPolicy(
            follow_limit=s.follow_limit, big_account_followers=s.big_account_followers
        ),
        following=stores.memberships("following"),
        friends_cache=stores.cache(keys.FRIENDS_CACHE_SECONDS, keys.friends),
        degree2_cache=stores.cache(keys.DEGREE2_CACHE_SECONDS, keys.degree2),
    )


def shields(c: Parts) -> Shields:
    """Every user's blocks and mutes from memory: the reader each feature filters with."""
    from warble.domain.blocks.service import Shields

    return Shields(c.stores.block_sets(), c.stores.blocks())


def blocks(c: Parts) -> BlockService:
    from warble.domain.blocks.service import BlockService

    return BlockService(
        store=c.stores.blocks(),
        shields=c.shields,
        following=c.stores.memberships("following"),
        graph=c.graph,
        profiles=c.profiles,
        ids=c.ids,
    )


def muted_words(c: Parts) -> MutedWordService:
    """Each user's muted words: the list, and the matcher the filtered reads ask for."""
    from warble.domain.muted_words.service import MutedWordService

    s, stores = c.settings, c.stores
    return MutedWordService(
        stores.muted_words(), stores.cache(s.membership_ttl_seconds, keys.muted_words)
    )
