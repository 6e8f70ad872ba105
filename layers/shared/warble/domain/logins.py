"""The one rule by which a login (a username or an email address) names an account.

Case is folded for ASCII letters only, the same way in Python and in SQL (``lower(x COLLATE
"C")``, which PostgreSQL folds byte by byte for ASCII whatever the database's collation): so
the lookup and the login throttle agree, and they agree on every database. A collation's own
``lower()`` does not: under glibc's (Aurora's default en_US.UTF-8, C.UTF-8) ``lower('İ')`` is
``i`` while Python's is ``i̇``, and under ICU it is ``i̇`` too, so ``sxİ`` named the account
``sxi`` to the lookup but another bucket to the throttle. Usernames are ASCII anyway; an email
address whose non-ASCII letters differ in case from the stored one names no account.
"""

from __future__ import annotations

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def login_key(login: str) -> str:
    """``login`` with its ASCII letters lower-cased, nothing else changed."""
    return login.translate(_ASCII_LOWER)
