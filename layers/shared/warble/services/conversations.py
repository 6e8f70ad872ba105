"""The builders of direct messages and of Discover (whose matches open conversations)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from warble.services.parts import Parts

if TYPE_CHECKING:
    from warble.domain.conversations.service import ConversationService
    from warble.domain.discover.service import DiscoverService


def conversations(c: Parts) -> ConversationService:
    from warble.domain.conversations.service import ConversationService

    return ConversationService(
        store=c.stores.conversations(),
        unread=c.stores.unread_messages(),
        profiles=c.profiles,
        graph=c.graph,
        ids=c.ids,
        pusher=c.pusher,
        shields=c.shields,
    )


def discover(c: Parts) -> DiscoverService:
    from warble.domain.discover.service import Announcer, DiscoverService

    stores = c.stores
    return DiscoverService(
        store=stores.discover_records(),
        index=stores.geo_index(),
        seen=stores.seen_filter(),
        ledger=stores.swipe_ledger(),
        # A match opens (or finds) the pair's conversation and lets them converse.
        conversations=c.conversations,
        profiles=c.profiles,
        people=c.graph,
        announcer=Announcer(c.pusher, c.profiles),
        ids=c.ids,
        shields=c.shields,
    )
