"""The builders of what an owner does with the whole account: its deletion (a workflow of
steps) and its export."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from warble.services.parts import Parts

if TYPE_CHECKING:
    from warble.domain.deletion.service import AccountDeletion
    from warble.domain.export.service import ExportService


def deletion(c: Parts) -> AccountDeletion:
    """The account deletion workflow; its stores are built when a step first runs (the
    accounts function only sends the first step)."""
    from warble.domain.deletion.service import AccountDeletion, DeletionPolicy

    s, stores = c.settings, c.stores
    return AccountDeletion(
        queue=stores.step_queue(),
        # Each built once, by the first step that needs it.
        tables=cache(stores.table_erasure),
        redis=cache(stores.redis_erasure),
        directory=cache(stores.users),
        outbox=cache(stores.deleted_accounts),
        policy=DeletionPolicy(
            slice_items=s.deletion_slice_items, slice_seconds=s.deletion_slice_seconds
        ),
    )


def export(c: Parts) -> ExportService:
    from warble.domain.accounts.answers import Principal
    from warble.domain.export.service import ExportOwner, ExportService, ExportSources

    accounts = c.accounts
    return ExportService(
        ExportSources(
            owner=ExportOwner(
                profile=accounts.own_profile,
                counted=c.graph.me,
                live_sessions=lambda uid, sid: accounts.list_sessions(Principal(uid, sid)).items,
            ),
            tweets=c.tweets,
            likes=c.likes,
            graph=c.graph,
            shields=c.blocks,
            muted_words=c.muted_words,
            reports=c.reports,
            conversations=c.conversations,
            notifications=c.notifications,
            media=c.media,
            discover=c.discover,
        )
    )
