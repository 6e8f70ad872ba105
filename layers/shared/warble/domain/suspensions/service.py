"""Suspensions (API.md "Reports and moderation", docs/moderation.md "Suspensions"): a moderator
suspends an account, or lifts its suspension.

A suspension is one column (``users.suspended_at``) and what derives from it, nothing
rewritten: every profile read leaves a suspended account out (``warble.dal.accounts``), so the
user is a 404 to everyone and every rendered page (home, user timeline, hashtag page, replies,
search) drops their tweets and the retweets of them, as it drops a deleted account's. Their
follows, tweets and counters stay where they are, and a lift brings all of it back.

``suspend`` commits the column, then ends every session (tokens refused, sockets closed) and
drops the cached profile (its lease voided: no fill in flight brings the old one back). Both
are run again by a repeated call, so a retry after a failure between them finishes the job.
"""

from __future__ import annotations

from warble.domain.logins import login_key
from warble.domain.suspensions.answers import Suspension
from warble.domain.suspensions.ports import Account, ProfileCache, SessionEnder, SuspensionStore
from warble.errors import FieldError, Forbidden, NotFound, ValidationFailed


class SuspensionService:
    def __init__(
        self,
        store: SuspensionStore,
        sessions: SessionEnder,
        profiles: ProfileCache,
        moderators: frozenset[str],
    ) -> None:
        self._store = store
        self._sessions = sessions
        self._profiles = profiles
        # The admins' usernames, folded (``logins.login_key``): moderators are the admins.
        self._moderators = moderators

    def suspend(self, moderator: int, user_id: int) -> Suspension:
        """Suspend ``user_id`` (idempotent). 403 for anyone but a moderator, 404 for an unknown
        account, 400 for an admin's."""
        target = self._target(moderator, user_id)
        if login_key(target.username) in self._moderators:
            raise ValidationFailed(
                [FieldError("user_id", "an admin cannot be suspended")],
                "Admins cannot be suspended.",
            )
        self._store.set_suspended(user_id, True)
        # After the commit: a login racing it opens no session (the session INSERT reads the
        # column under a share lock), and every session it had ends here.
        self._sessions.end_sessions(user_id)
        self._profiles.invalidate(user_id)
        return Suspension(suspended=True)

    def lift(self, moderator: int, user_id: int) -> Suspension:
        """Lift the suspension of ``user_id`` (idempotent): the user can log in again, and
        their profile and tweets show from the next read."""
        self._target(moderator, user_id)
        self._store.set_suspended(user_id, False)
        self._profiles.invalidate(user_id)
        return Suspension(suspended=False)

    def _target(self, moderator: int, user_id: int) -> Account:
        me = self._store.account(moderator)
        if me is None or login_key(me.username) not in self._moderators:
            raise Forbidden("Only moderators may suspend accounts.")
        target = self._store.account(user_id)
        if target is None:
            raise NotFound("No such user.")
        return target
