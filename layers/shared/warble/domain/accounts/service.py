"""Accounts: sign-up, login, sessions, profiles.

Profiles are read through a lease-guarded cache-aside cache and written database-first, then
invalidated. Sessions live in PostgreSQL (tokens stored only as SHA-256 hashes); every request's
session check reads them through the same kind of cache, whose fill lease a revocation voids,
so a session-cache fill racing the revocation cannot reopen it.

A session ends in one way only, ``end_sessions`` (logout, revocation, and whatever else ends
sessions: a password change or reset, an account's deletion): revoked in PostgreSQL, dropped
from the cache, and its WebSocket connections forgotten and closed, all before the caller
answers. A connection's every frame is checked against its session too (``session_gate_later``
with the session its token opened), so a frame racing the end is refused as well.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from warble import clock, security
from warble.domain.accounts.answers import Auth, LiveSession, Me, Principal, Sessions
from warble.domain.accounts.ports import (
    AccountDeletions,
    DuplicateAccount,
    FailedAuthentications,
    GateAnswer,
    LastSeen,
    LoginAttempts,
    Session,
    SessionConnections,
    SessionLookups,
    SessionStore,
    SessionSubject,
    UnknownUser,
    UserStore,
)
from warble.domain.logins import login_key, skeleton
from warble.domain.rate_limits import Budget
from warble.domain.shared import Cache, IdGenerator, Later, ReadBatch, at_once
from warble.errors import (
    AccountSuspended,
    Conflict,
    Forbidden,
    InvalidCredentials,
    NotFound,
    RateLimited,
    Unauthorized,
)


@dataclass(frozen=True)
class IssuedSession:
    user: dict[str, Any]
    token: str
    session: Session

    def answer(self, user: Me) -> Auth:
        """What sign-up and login answer, with the user as its owner reads it (with counts)."""
        return Auth(
            user=user,
            token=self.token,
            session_id=str(self.session.id),
            expires_at=clock.rfc3339(self.session.expires_at),
        )


@dataclass(frozen=True)
class AccountPolicy:
    password_hash_rounds: int
    session_ttl: timedelta
    # The admins' usernames (folded, ``logins.login_key``): never signed up through the API,
    # only created by the operator (``create_admin``), so nobody can claim one first.
    admin_usernames: frozenset[str] = frozenset()


def profile_record(row: dict[str, Any]) -> dict[str, Any]:
    """The cached form of a user row: JSON-safe, ids as ints, times as RFC 3339. A suspended
    account's is a stand-in without a profile (``shown`` is False): cached like any other, so
    the pages that leave its tweets out read no database for it while it lasts."""
    if row.get("suspended"):
        return {"id": int(row["id"]), "suspended": True}
    created = row["created_at"]
    return {
        "id": int(row["id"]),
        "username": row["username"],
        "email": row["email"],
        # As stored: an explicit "" stays "" (the username is only the default at sign-up).
        "display_name": row["display_name"] if row["display_name"] is not None else row["username"],
        "bio": row["bio"],
        "created_at": created if isinstance(created, str) else clock.rfc3339(created),
    }


def shown(record: dict[str, Any] | None) -> bool:
    """Whether a cached profile record is a profile: not missing, not a suspended account."""
    return record is not None and not record.get("suspended")


def _live(record: dict[str, Any] | None) -> tuple[Principal, int] | None:
    if record is None or record["revoked"] or record["expires_at_ms"] <= clock.epoch_ms():
        return None
    return Principal(record["user_id"], record["id"]), record["expires_at_ms"]


def session_record(row: Session) -> dict[str, Any]:
    return {
        "id": row.id,
        "user_id": row.user_id,
        "expires_at_ms": int(row.expires_at.timestamp() * 1000),
        "revoked": row.revoked_at is not None,
    }


class AccountService:
    def __init__(
        self,
        users: UserStore,
        sessions: SessionStore,
        profiles: Cache[int],
        session_cache: Cache[SessionSubject],
        throttle: LoginAttempts,
        lookups: SessionLookups,
        ids: IdGenerator,
        policy: AccountPolicy,
        connections: SessionConnections,
        failures: FailedAuthentications,
        last_seen: LastSeen | None = None,
        deletions: AccountDeletions | None = None,
    ) -> None:
        self._users = users
        self._deletions = deletions
        self._last_seen = last_seen
        self._sessions = sessions
        self._profiles = profiles
        self._session_cache = session_cache
        self._throttle = throttle
        self._lookups = lookups
        self._ids = ids
        self._policy = policy
        self._connections = connections
        self._failures = failures

    # ---- sign-up and login -------------------------------------------------------------
    def signup(
        self, username: str, email: str, password: str, display_name: str | None, device: str
    ) -> IssuedSession:
        if skeleton(username) in {skeleton(admin) for admin in self._policy.admin_usernames}:
            # API.md: an admin's username is taken, whether or not the operator created it yet;
            # so is every name that reads as one (issue 47 item 8: warbleadmin, warble_admin_).
            raise Conflict("That username is already taken.", code="username_taken")
        row = self._insert_user(username, email, password, display_name)
        return self._open_session(profile_record(row), device)

    def create_admin(self, username: str, email: str, password: str) -> tuple[int, bool]:
        """The operator's way to an admin account (an admin's username cannot be signed up):
        (its id, whether it was created now). An account already holding the name is left as
        it is and reported as not created; the operator decides whether it is theirs."""
        if login_key(username) not in self._policy.admin_usernames:
            raise ValueError(f"{username!r} is not one of the admin usernames (AdminUsernames)")
        try:
            row = self._insert_user(username, email, password, None)
        except Conflict:
            existing = self._users.id_by_username(username)
            if existing is None:  # the email is the one taken
                raise
            return existing, False
        return int(row["id"]), True

    def _insert_user(
        self, username: str, email: str, password: str, display_name: str | None
    ) -> dict[str, Any]:
        password_hash = security.hash_password(password, self._policy.password_hash_rounds)
        try:
            return self._users.insert(
                self._ids.next_id(),
                username,
                email,
                password_hash,
                username if display_name is None else display_name,
            )
        except DuplicateAccount as exc:
            raise Conflict(
                f"That {exc.field} is already taken.", code=f"{exc.field}_taken"
            ) from exc

    def login(self, login: str, password: str, device: str, source: str = "") -> IssuedSession:
        """Failures count per account, whichever spelling named it (its username in any case,
        its email): the attempt is reserved on the account the lookup found, before the password
        check, so racing attempts cannot get past the limit. A login that names no account
        counts under its folded self, so that it too is refused after as many tries (a 429
        only for real accounts would tell which exist). Failures count per client address
        too (``source``): an address's five lock out that address, not the owner's (see
        ``LoginAttempts``)."""
        credentials = self._users.credentials_by_login(login)
        subject = (
            f"user:{int(credentials['id'])}"
            if credentials is not None
            else f"name:{login_key(login)}"
        )
        wait = self._throttle.reserve(subject, source)
        if wait:
            raise RateLimited(wait)
        if credentials is None:
            security.burn_password_check(password, self._policy.password_hash_rounds)
            raise InvalidCredentials()
        if not security.verify_password(password, credentials["password_hash"]):
            raise InvalidCredentials()
        self._throttle.release(subject, source)
        # Told only to whoever knows the password: a suspension is no one else's business.
        if credentials.get("suspended"):
            raise AccountSuspended()
        return self._open_session(self.profile(int(credentials["id"])), device)

    def _open_session(self, user: dict[str, Any], device: str) -> IssuedSession:
        token = security.new_token(int(user["id"]))
        try:
            session = self._sessions.insert(
                self._ids.next_id(),
                user["id"],
                security.token_hash(token),
                device,
                clock.now() + self._policy.session_ttl,
            )
        except UnknownUser as exc:  # a login that raced the account's deletion
            raise InvalidCredentials() from exc
        return IssuedSession(user=self.owned(user), token=token, session=session)

    # ---- sessions ----------------------------------------------------------------------
    def authenticate(self, token: str) -> tuple[Principal, int] | None:
        """Which live session is this token? (and its expiry, ms)"""
        if not security.looks_like_token(token):
            return None
        user_id = security.token_user(token)
        return _live(self._session(security.token_hash(token), user_id))

    def _looked_up(self, digest: bytes, user_id: int | None, address: str) -> dict[str, Any] | None:
        """The session of a token that is not cached: a PostgreSQL query and a fill lease. A
        forged token is never cached, so each one would cost both: past the client address's
        budget of failed lookups the lookup is refused (429) before it is made, and each lookup
        that finds no live session spends that budget. A cached session never touches it."""
        if address:
            wait = self._failures.auth_failures_wait(address)
            if wait:
                raise RateLimited(wait, "Too many requests with unknown tokens; try again later.")
        record = self._session(digest, user_id)
        if address and _live(record) is None:
            self._failures.auth_failed(address)
        return record

    def _session(self, digest: bytes, user_id: int | None) -> dict[str, Any] | None:
        def load() -> dict[str, Any] | None:
            row = self._sessions.by_token_hash(digest)
            if row is None or (user_id is not None and row.user_id != user_id):
                return None  # a token names its session's user, or no session
            return session_record(row)

        record: dict[str, Any] | None = self._session_cache.get_or_load((digest, user_id), load)
        return record

    def batch(self) -> ReadBatch:
        """A round trip for the gate and the reads a request starts with (``gate_later``)."""
        return self._lookups.batch()

    def gate_later(
        self, batch: ReadBatch, token: str, budget: Budget, address: str = ""
    ) -> Later[tuple[Principal, tuple[bool, int, int] | None]]:
        """The HTTP gate, queued in ``batch``: its reader gives the caller of a live session for
        this bearer token, and the user budget's answer when it was spent in the same call
        (else None: the caller spends it). 401 (Unauthorized) for a malformed token at once,
        with nothing sent; for a missing, revoked or expired session when read, so a route's
        reads queued in the same batch are never used for such a caller. ``address`` is the
        client's (see ``_looked_up``)."""
        # A token that names its user looks like a token: one match for most (the old form's
        # tokens are matched again).
        user_id = security.token_user(token)
        if user_id is None and not security.looks_like_token(token):
            raise Unauthorized()
        digest = security.token_hash(token)
        return self.session_gate_later(batch, digest, user_id, budget, address)

    def session_gate_later(
        self,
        batch: ReadBatch,
        digest: bytes,
        user_id: int | None,
        budget: Budget,
        address: str = "",
    ) -> Later[tuple[Principal, tuple[bool, int, int] | None]]:
        """``gate_later`` for the session of a token known by its hash and the user it names
        (None: a token of the old form): a WebSocket frame's session, which the connection's
        authorizer found. A token that names its user costs one script in ``batch`` when its
        session is cached: the session, its last-seen throttle and the budget, all under the
        user's tag. A token of the old form is checked as before, on its own."""
        if user_id is None:
            return lambda: (self._require(digest, None, address), None)
        read = self._lookups.gate_later(
            batch, user_id, digest, clock.epoch_ms(), budget.limit, budget.window_seconds * 1000
        )

        def passage() -> tuple[Principal, tuple[bool, int, int] | None]:
            found: GateAnswer | None = read()
            if found is None:
                record = self._looked_up(digest, user_id, address)
                due = record is not None and self._lookups.due_for_touch(digest, user_id)
                return self._admit(record, due, digest, user_id), None
            admitted = self._admit(found.record, found.due_for_touch, digest, user_id)
            return admitted, found.spent

        return passage

    def require_token(self, token: str, address: str = "") -> Principal:
        """The caller of a live session for this bearer token, else 401: the gate without the
        budget. Warm, one Redis call: the cached session and its last-seen throttle."""
        if not security.looks_like_token(token):
            raise Unauthorized()
        digest = security.token_hash(token)
        return self._require(digest, security.token_user(token), address)

    def require_session(self, digest: bytes, user_id: int | None, address: str = "") -> Principal:
        """``require_token`` for a token known by its hash and the user it names."""
        return self._require(digest, user_id, address)

    def _require(self, digest: bytes, user_id: int | None, address: str) -> Principal:
        hit = self._lookups.cached(digest, user_id)
        if hit is None:
            record = self._looked_up(digest, user_id, address)
            due_for_touch = record is not None and self._lookups.due_for_touch(digest, user_id)
        else:
            record, due_for_touch = hit
        return self._admit(record, due_for_touch, digest, user_id)

    def _admit(
        self,
        record: dict[str, Any] | None,
        due_for_touch: bool,
        digest: bytes,
        user_id: int | None,
    ) -> Principal:
        verdict = _live(record)
        if verdict is None or (user_id is not None and verdict[0].user_id != user_id):
            raise Unauthorized()
        principal = verdict[0]
        # Seen (at most once a minute per session): noted in Redis, written to PostgreSQL by
        # flush_last_seen in batches, which also drops the cache entry of a session revoked
        # while its entry survived (the revocation's invalidation lost with Redis).
        if due_for_touch and self._last_seen is not None:
            self._last_seen.note(principal.session_id, clock.epoch_ms() / 1000)
        return principal

    def flush_last_seen(self, batch: int = 1000) -> int:
        """The sessions seen since the last flush: their ``last_seen_at`` written, ``batch`` to
        a statement; a session no longer live has its cached entry dropped, so its next request
        reads PostgreSQL and gets 401. Answers how many were written."""
        if self._last_seen is None:
            return 0
        written = 0
        for seen in self._last_seen.take(batch):
            for token_hash, user_id in self._sessions.touch_many(seen):
                self._session_cache.invalidate((token_hash, user_id))
                self._session_cache.invalidate((token_hash, None))  # a token of the old form
            written += len(seen)
        return written

    def require_from_store(self, principal: Principal, expires_at_ms: int) -> Principal:
        """The caller ``authenticate`` found, checked while Redis is unreachable: the session's
        row says whether it was revoked (a cached session may have outlived a revocation whose
        invalidation Redis lost). One PostgreSQL read per request, so only reads use it."""
        row = self._sessions.by_id(principal.session_id)
        if (
            row is None
            or row.user_id != principal.user_id
            or row.revoked_at is not None
            or row.expires_at <= clock.now()
            or expires_at_ms <= clock.epoch_ms()
        ):
            raise Unauthorized()
        return principal

    def list_sessions(self, principal: Principal) -> Sessions:
        return Sessions(
            [
                LiveSession(
                    session_id=str(row.id),
                    device=row.device,
                    created_at=clock.rfc3339(row.created_at),
                    last_seen_at=clock.rfc3339(row.last_seen_at),
                    expires_at=clock.rfc3339(row.expires_at),
                    current=row.id == principal.session_id,
                )
                for row in self._sessions.live_for_user(principal.user_id)
            ]
        )

    def revoke(self, principal: Principal, session_id: int) -> None:
        """Logout (its own session) or the revocation of another of the caller's sessions."""
        if not self.end_sessions(principal.user_id, [session_id]):
            raise NotFound("No such session.")

    def end_sessions(
        self, user_id: int, session_ids: Collection[int] | None = None, *, keep: int | None = None
    ) -> list[int]:
        """End live sessions of a user: those named, or every one (None), but ``keep``. The one
        way a session ends (logout, revocation, a password change or reset, an account's
        deletion). When it returns, their tokens are refused, their WebSocket connections are
        forgotten (no push reaches them) and closed, and any frame they still send is refused.
        Returns the ids of the sessions it ended (those already ended are left out)."""
        return self._forget_sessions(user_id, self._sessions.end(user_id, session_ids, keep))

    def _forget_sessions(self, user_id: int, rows: Sequence[Session]) -> list[int]:
        """Sessions PostgreSQL no longer holds live: out of the cache, their sockets closed."""
        if not rows:
            return []
        # PostgreSQL first, then the cache: dropping the lease makes any in-flight fill of the
        # live session fail, so the next check reads the revoked row. Both forms of a token's
        # key (only the hash is stored, not the form the token had).
        self._session_cache.invalidate_many(
            [
                subject
                for row in rows
                for subject in ((row.token_hash, user_id), (row.token_hash, None))
            ]
        )
        ended = [row.id for row in rows]
        self._connections.close_sessions(user_id, ended)
        return ended

    # ---- deletion (API.md "Deleting an account"; docs/accounts.md) -------------------------
    def delete_account(self, principal: Principal, password: str, source: str = "") -> None:
        """The synchronous part of a deletion: when it returns, the account is out of
        PostgreSQL (its tokens refused, its login failing, every read of it 404, its username
        and email free), its sessions' cached entries and sockets are gone, its profile is out
        of the cache, and the workflow that removes everything it made has started. A wrong
        password: 403 invalid_credentials, nothing changed; each one spends the account's
        failed logins (as a password change's does), so a stolen token cannot guess the
        password past the login limit: then 429."""
        user_id = principal.user_id
        stored = self._users.password_hash(user_id)
        if stored is None:
            raise Unauthorized()  # deleted by a racing request of another session
        subject = f"user:{user_id}"  # the login throttle's subject of this account
        wait = self._throttle.reserve(subject, source)
        if wait:
            raise RateLimited(wait)
        if not security.verify_password(password, stored):
            raise Forbidden("The password is not right.", code="invalid_credentials")
        self._throttle.release(subject, source)
        ended = self._users.delete(user_id)
        if ended is None:
            raise Unauthorized()
        # PostgreSQL first (the commit is the deletion), then what derives from it: the leases
        # the invalidations drop make any in-flight fill of the old rows fail.
        self._forget_sessions(user_id, ended)
        self._profiles.invalidate(user_id)
        if self._deletions is not None:
            self._deletions.start(user_id)

    # ---- profiles ----------------------------------------------------------------------
    def profile(self, user_id: int) -> dict[str, Any]:
        def load() -> dict[str, Any] | None:
            row = self._users.get(user_id)
            return None if row is None else profile_record(row)

        record = self._profiles.get_or_load(user_id, load)
        if record is None or not shown(record):
            raise NotFound("No such user.")
        return record

    def own_profile(self, user_id: int) -> dict[str, Any]:
        """A profile as its owner reads it (``GET /v1/users/me``, the export): ``owned``."""
        return self.owned(self.profile(user_id))

    def owned(self, record: dict[str, Any]) -> dict[str, Any]:
        """A profile record with what only its owner is told: whether they are an admin. It is
        read from the settings on each call, never cached with the profile: an operator's change
        of AdminUsernames shows at the next request."""
        return {**record, "admin": self.is_admin(str(record["username"]))}

    def is_admin(self, username: str) -> bool:
        return login_key(username) in self._policy.admin_usernames

    def profiles(self, user_ids: list[int]) -> dict[int, dict[str, Any]]:
        """Many profiles: one MGET, one PostgreSQL query for the misses; unknown ids left out."""
        return at_once(self._profiles.batch(), lambda batch: self.profiles_later(batch, user_ids))

    def profiles_later(
        self, batch: ReadBatch, user_ids: list[int], fill: bool = True
    ) -> Later[dict[int, dict[str, Any]]]:
        """``profiles`` with its MGET queued in ``batch`` (read with other stores' reads)."""
        unique = list(dict.fromkeys(user_ids))

        def load(missing: list[int]) -> list[dict[str, Any] | None]:
            found = self._users.get_many([unique[i] for i in missing])
            rows = {int(row["id"]): row for row in found}
            return [profile_record(rows[unique[i]]) if unique[i] in rows else None for i in missing]

        read = self._profiles.get_many_later(batch, unique, load, fill=fill)

        def profiles() -> dict[int, dict[str, Any]]:
            records = read()
            return {
                uid: rec
                for uid, rec in zip(unique, records, strict=True)
                if rec is not None and shown(rec)
            }

        return profiles

    def profile_by_username(self, username: str) -> dict[str, Any]:
        user_id = self._users.id_by_username(username)
        if user_id is None:
            raise NotFound("No such user.")
        return self.profile(user_id)

    def update_profile(self, principal: Principal, changes: dict[str, str]) -> dict[str, Any]:
        row = self._users.update_profile(principal.user_id, changes)
        if row is None:
            raise NotFound("No such user.")
        # Database first, then invalidate: the lease makes any in-flight fill of the old row fail.
        self._profiles.invalidate(principal.user_id)
        return self.owned(profile_record(row))
