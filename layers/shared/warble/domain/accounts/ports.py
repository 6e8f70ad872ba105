"""What accounts and sessions need of their stores (``warble.dal.accounts``, ``account_state``),
and the errors those raise."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from warble.domain.shared import (
    Later,
    ReadBatch,
)

# What a cached session is read and dropped by: its token's hash (SHA-256, as stored) and the
# user the token names (None for a token of the old form, which names none); its key is named
# from them where keys are (warble.keys.session, with the hash in hex).
SessionSubject = tuple[bytes, int | None]


class Session(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def user_id(self) -> int: ...
    @property
    def token_hash(self) -> bytes: ...
    @property
    def device(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def last_seen_at(self) -> datetime: ...
    @property
    def expires_at(self) -> datetime: ...
    @property
    def revoked_at(self) -> datetime | None: ...


class DuplicateAccount(Exception):
    """Raised by the user store when a unique username or email is already taken."""

    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field


class UnknownUser(Exception):
    """Raised by the session store when the session's user is gone (deleted meanwhile)."""


class UserStore(Protocol):
    def insert(
        self, user_id: int, username: str, email: str, password_hash: str, display_name: str
    ) -> dict[str, Any]: ...
    def get(self, user_id: int) -> dict[str, Any] | None: ...
    def get_many(self, user_ids: list[int]) -> list[dict[str, Any]]: ...
    def id_by_username(self, username: str) -> int | None: ...
    def credentials_by_login(self, login: str) -> dict[str, Any] | None: ...
    def update_profile(self, user_id: int, changes: dict[str, str]) -> dict[str, Any] | None: ...
    def password_hash(self, user_id: int) -> str | None: ...
    def delete(self, user_id: int) -> Sequence[Session] | None:
        """The account out of the users table in one transaction (its sessions and search rows
        with it, its id kept as a deleted account): the sessions it had (live or not), or None
        when there was no such user."""
        ...


class SessionStore(Protocol):
    def insert(
        self, session_id: int, user_id: int, token_hash: bytes, device: str, expires_at: datetime
    ) -> Session: ...
    def by_token_hash(self, token_hash: bytes) -> Session | None: ...
    def by_id(self, session_id: int) -> Session | None: ...
    def live_for_user(self, user_id: int) -> Sequence[Session]: ...
    def end(
        self, user_id: int, session_ids: Collection[int] | None, keep: int | None
    ) -> Sequence[Session]: ...
    def touch_many(self, seen: Sequence[tuple[int, float]]) -> list[tuple[bytes, int]]:
        """``last_seen_at`` of each live session among ``(session id, epoch seconds)``, in one
        statement; the token hash and user of each that is not live any more (revoked,
        expired)."""
        ...


class LastSeen(Protocol):
    """Sessions seen by the gate, kept in Redis until the flush writes them to PostgreSQL in
    batches (one UPDATE per active minute and session would pass one Aurora writer at 100M
    daily users)."""

    def note(self, session_id: int, at: float) -> None: ...
    def take(self, limit: int) -> Iterator[list[tuple[int, float]]]: ...


class FailedAuthentications(Protocol):
    """Per client address, the tokens whose session was looked up in PostgreSQL and not found
    (``warble.domain.rate_limits.RateLimits``)."""

    def auth_failures_wait(self, source_ip: str) -> int: ...
    def auth_failed(self, source_ip: str) -> None: ...


class SessionConnections(Protocol):
    """The WebSocket connections of sessions (``warble.domain.push.Pusher``): closed, and
    forgotten so that no push reaches them, when their session ends."""

    def close_sessions(self, user_id: int, session_ids: Collection[int]) -> int: ...


class AccountDeletions(Protocol):
    """The asynchronous part of a deletion (``warble.domain.deletion``): everything the
    account made, removed by a workflow that this starts."""

    def start(self, user_id: int) -> bool:
        """Start it; False when it could not be started now (it is started again later: the
        deletion is committed, its workflow's start is not what a client waits for)."""
        ...


class LoginAttempts(Protocol):
    """Failed-login throttle: attempts reserved before the password check, per subject (an
    account, or the folded login of one that names no account) and client address (``source``,
    a network as the request budgets name it): one address's failures lock out that address,
    not the owner (issue 47 item 3)."""

    def reserve(self, subject: str, source: str = "") -> int: ...
    def release(self, subject: str, source: str = "") -> None: ...


@dataclass(frozen=True)
class GateAnswer:
    """What the HTTP gate's one call found: the cached session record; for a live one, whether
    its ``last_seen_at`` is due for a touch and the user budget's answer (counted, used, ms
    until the window ends)."""

    record: dict[str, Any]
    due_for_touch: bool = False
    spent: tuple[bool, int, int] | None = None


class SessionLookups(Protocol):
    """The cached session of a token (by its hash) and whether its ``last_seen_at`` is due for
    a touch, read together; None when the session is not cached. ``gate_later`` adds the user's
    budget, spent only for a live session, queued in the request's first round trip."""

    def batch(self) -> ReadBatch: ...
    def gate_later(
        self,
        batch: ReadBatch,
        user_id: int,
        token_hash: bytes,
        now_ms: int,
        limit: int,
        window_ms: int,
    ) -> Later[GateAnswer | None]: ...
    def cached(
        self, token_hash: bytes, user_id: int | None = None
    ) -> tuple[dict[str, Any], bool] | None: ...
    def due_for_touch(self, token_hash: bytes, user_id: int | None = None) -> bool: ...


@dataclass(frozen=True)
class TicketClaim:
    """What a WebSocket connect ticket stands for (``warble.domain.accounts.tickets``): the
    session that asked for it, as the socket's authorizer would have found it from its token
    (the token's hash keys its cached session; a token of the old form names no user)."""

    user_id: int
    session_id: int
    token_hash: bytes
    names_user: bool
    expires_at_ms: int


class SocketTickets(Protocol):
    """Connect tickets by their hash (SHA-256; the ticket itself is never stored), under the
    user the ticket names: kept ``ttl_ms``, and taken at most once."""

    def put(self, ticket_hash: bytes, claim: TicketClaim, ttl_ms: int) -> None: ...
    def take(self, ticket_hash: bytes, user_id: int) -> TicketClaim | None:
        """The claim, removed in the same step (of racing takes exactly one gets it); None
        when there is none: never issued, already taken, or expired."""
        ...


class Profiles(Protocol):
    def profile(self, user_id: int) -> dict[str, Any]: ...
    def profiles(self, user_ids: list[int]) -> dict[int, dict[str, Any]]: ...
    def profiles_later(
        self, batch: ReadBatch, user_ids: list[int], fill: bool = True
    ) -> Later[dict[int, dict[str, Any]]]: ...
