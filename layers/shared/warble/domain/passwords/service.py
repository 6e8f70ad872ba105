"""Passwords: a change by the signed-in owner, and a reset by email (API.md "Accounts").

A change checks the current password (throttled as logins are, per account), writes the new
hash and ends every other session of the user. A reset's request is queued as it came
(``request_reset``: the same work for every address, so its timing tells no registered address
from another); the queue's consumer looks it up and mails (``mail_reset``) a single-use token
whose SHA-256 hash alone is stored: it works for ``token_ttl``, a newer one voids the older, at
most ``cap`` are mailed per address and ``cap_window``; redeeming one sets the password and
ends every session. Sessions end through the accounts feature's one way (``SessionEnder``),
which closes their WebSocket connections too. No token or password is ever logged.
"""

from __future__ import annotations

import html
import secrets
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlencode

from warble import clock, security
from warble.domain.accounts.ports import LoginAttempts
from warble.domain.passwords.ports import (
    Credentials,
    Mailer,
    ResetRequests,
    ResetTokens,
    SessionEnder,
)
from warble.errors import Forbidden, NotFound, RateLimited, WarbleError


class InvalidToken(WarbleError):
    status = 400
    code = "invalid_token"
    message = "This reset link is unknown, used or expired; ask for a new one."


@dataclass(frozen=True)
class PasswordPolicy:
    password_hash_rounds: int
    # The web client's reset page: the email's link is this with ``token=<token>`` in its query.
    reset_page: str
    token_ttl: timedelta = timedelta(minutes=30)
    cap: int = 3
    cap_window: timedelta = timedelta(hours=1)


def reset_token() -> str:
    """256 random bits, URL-safe (43 characters), as a session token's secret."""
    return secrets.token_urlsafe(32)


class PasswordService:
    def __init__(
        self,
        credentials: Credentials,
        tokens: ResetTokens,
        mailer: Mailer,
        sessions: SessionEnder,
        throttle: LoginAttempts,
        policy: PasswordPolicy,
        requests: ResetRequests | None = None,
    ) -> None:
        self._credentials = credentials
        self._requests = requests
        self._tokens = tokens
        self._mailer = mailer
        self._sessions = sessions
        self._throttle = throttle
        self._policy = policy

    def change(
        self, user_id: int, session_id: int, current: str, new: str, source: str = ""
    ) -> list[int]:
        """The owner's change: 403 ``invalid_credentials`` for a wrong ``current`` (each one
        spends the account's login attempts, so the check cannot be used to guess the password
        past the login limit); every other session ended. Returns the ended sessions' ids."""
        stored = self._credentials.password_hash(user_id)
        if stored is None:
            raise NotFound("No such user.")
        subject = f"user:{user_id}"  # the login throttle's subject of this account
        wait = self._throttle.reserve(subject, source)
        if wait:
            raise RateLimited(wait)
        if not security.verify_password(current, stored):
            raise Forbidden("The current password is wrong.", code="invalid_credentials")
        self._throttle.release(subject, source)
        fresh = security.hash_password(new, self._policy.password_hash_rounds)
        if not self._credentials.set_password_hash(user_id, fresh, clock.now()):
            raise NotFound("No such user.")
        return self._sessions.end_sessions(user_id, keep=session_id)

    def request_reset(self, email: str) -> None:
        """Queue a reset for ``email`` as it came, known or not: no lookup on the request path,
        whose timing would tell a registered address from another (issue 47 item 1). The
        caller answers 202 at once; the queue's consumer runs ``mail_reset``."""
        if self._requests is None:
            raise RuntimeError("no reset queue configured (PASSWORD_RESET_QUEUE_URL)")
        self._requests.send(email)

    def mail_reset(self, email: str) -> bool:
        """Mail a reset link to the account of ``email``, if there is one and it is under the
        cap (the queue's consumer; True: a mail was sent)."""
        found = self._credentials.recipient(email)
        token = reset_token()
        digest = security.token_hash(token)
        if found is None:
            return False
        user_id, address = found
        now = clock.now()
        policy = self._policy
        if not self._tokens.issue(
            user_id, digest, now, now + policy.token_ttl, policy.cap, now - policy.cap_window
        ):
            return False
        sent = False
        try:
            self._mailer.send(address, *reset_email(reset_link(policy.reset_page, token), policy))
            sent = True
        finally:
            if not sent:
                # SES failed (the queue delivers the request again): a token nobody received
                # must not spend the cap, or three failed tries would leave nothing to send.
                self._tokens.withdraw(digest)
        return True

    def confirm_reset(self, token: str, new: str) -> list[int]:
        """Redeem a reset token: the new password set, every session of the account ended.
        400 ``invalid_token`` for an unknown, used, voided or expired one."""
        if not 20 <= len(token) <= 128:
            raise InvalidToken()
        # Hashed first (bcrypt is slow): the token's transaction stays short.
        fresh = security.hash_password(new, self._policy.password_hash_rounds)
        user_id = self._tokens.redeem(security.token_hash(token), clock.now(), fresh)
        if user_id is None:
            raise InvalidToken()
        # The failed logins of the old password no longer say anything about the new one.
        self._throttle.release(f"user:{user_id}")
        return self._sessions.end_sessions(user_id)


def reset_link(page: str, token: str) -> str:
    """The web client's reset page with the token in its query (API.md), before any fragment
    (the client's own route: ``https://app/?token=...#/reset-password``)."""
    base, mark, fragment = page.partition("#")
    separator = "&" if "?" in base else "?"
    return f"{base}{separator}{urlencode({'token': token})}{mark}{fragment}"


def reset_email(link: str, policy: PasswordPolicy) -> tuple[str, str, str]:
    """Subject, text and HTML of the reset email."""
    minutes = int(policy.token_ttl.total_seconds() // 60)
    subject = "Reset your Warble password"
    text = (
        "Someone asked to reset the password of your Warble account.\n\n"
        f"To choose a new password, open this link within {minutes} minutes:\n\n{link}\n\n"
        "The link works once. If you did not ask, ignore this email: your password stays as"
        " it is.\n"
    )
    quoted = html.escape(link, quote=True)
    body = (
        "<p>Someone asked to reset the password of your Warble account.</p>"
        f'<p><a href="{quoted}">Choose a new password</a> (the link works once, for'
        f" {minutes} minutes).</p>"
        "<p>If you did not ask, ignore this email: your password stays as it is.</p>"
    )
    return subject, text, body
