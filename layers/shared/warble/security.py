"""Passwords and bearer tokens. Pure functions: no I/O."""

from __future__ import annotations

import hashlib
import re
import secrets

import bcrypt

TOKEN_PREFIX = "wbl_"


def hash_password(password: str, rounds: int) -> str:
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds)).decode()


def verify_password(password: str, password_hash: str) -> bool:
    try:
        return bcrypt.checkpw(password.encode(), password_hash.encode())
    except ValueError:
        return False


_DUMMY_HASHES: dict[int, str] = {}


def burn_password_check(password: str, rounds: int) -> None:
    """Spend the time of a real check, so an unknown login is not told apart by its speed."""
    dummy = _DUMMY_HASHES.get(rounds)
    if dummy is None:
        dummy = _DUMMY_HASHES[rounds] = hash_password("not-a-real-password", rounds)
    verify_password(password, dummy)


# ``wbl_<user id>_<secret>``: the secret is 256 random bits, URL-safe (43 characters). The user
# id is no secret (ids are in every answer); it lets the gate find the session, spend the user's
# budget and start the route's reads in one round trip (warble.http.app). A token names its user
# only as a claim: the session found by the whole token's hash must agree, or it is refused.
_TOKEN = re.compile(r"wbl_([1-9][0-9]{0,18})_[A-Za-z0-9_-]{43}")
# Before the user id: ``wbl_<secret>``, accepted until the last such session expires (30 days
# after the deploy that issued the new form; see docs/accounts.md, "The gate is one round trip").
_LEGACY_TOKEN = re.compile(r"wbl_[A-Za-z0-9_-]{43}")


def new_token(user_id: int) -> str:
    """256 random bits after the user id. Only its hash is ever stored."""
    return f"{TOKEN_PREFIX}{user_id}_{secrets.token_urlsafe(32)}"


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def token_user(token: str) -> int | None:
    """The user id a token claims; None for a token of the old form."""
    found = _TOKEN.fullmatch(token)
    return int(found.group(1)) if found else None


def looks_like_token(token: str) -> bool:
    return bool(_TOKEN.fullmatch(token) or _LEGACY_TOKEN.fullmatch(token))


# A WebSocket connect ticket, ``wst_<user id>_<secret>``: 256 random bits, URL-safe, good for one
# connect within seconds (warble.domain.accounts.tickets). It names its user as a token does, so
# its one key sits under the user's hash tag; only its hash is stored.
TICKET_PREFIX = "wst_"
_TICKET = re.compile(r"wst_([1-9][0-9]{0,18})_[A-Za-z0-9_-]{43}")


def new_ticket(user_id: int) -> str:
    return f"{TICKET_PREFIX}{user_id}_{secrets.token_urlsafe(32)}"


def ticket_user(ticket: str) -> int | None:
    """The user a ticket names; None for anything not shaped as a ticket."""
    found = _TICKET.fullmatch(ticket)
    return int(found.group(1)) if found else None
