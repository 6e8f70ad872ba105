"""Passwords and bearer tokens. Pure functions: no I/O."""

from __future__ import annotations

import hashlib
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


def new_token() -> str:
    """256 random bits, URL-safe. Only its hash is ever stored."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def looks_like_token(token: str) -> bool:
    return token.startswith(TOKEN_PREFIX) and 40 <= len(token) <= 64 and token.isascii()
