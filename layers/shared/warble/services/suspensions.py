"""Suspensions' builder: the moderators' service, over the accounts' sessions and cached
profiles."""

from __future__ import annotations

from typing import TYPE_CHECKING

from warble import keys
from warble.services.deferred import deferred
from warble.services.parts import Parts

if TYPE_CHECKING:
    from warble.domain.suspensions.service import SuspensionService


def suspensions(c: Parts) -> SuspensionService:
    """Suspend and lift (moderators: the admins). The profile cache is the accounts' own (the
    same keys), which a suspension drops."""
    from warble.domain.suspensions.service import SuspensionService

    s, stores = c.settings, c.stores
    return SuspensionService(
        store=stores.suspensions(),
        # Built when a suspension first ends sessions: the sockets' registry and sender.
        sessions=deferred(lambda: c.accounts),
        profiles=stores.cache(s.profile_cache_ttl_seconds, keys.profile),
        moderators=c.admin_usernames,
    )
