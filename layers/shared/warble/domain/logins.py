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


# ---- lookalike names (Unicode TR39's skeleton, a subset for usernames) ------------------------
# A username is 1-15 of A-Z a-z 0-9 _ (API.md), so the lookalikes that matter are within ASCII:
# the TR39 confusables among letters and digits (0/o, 1/l/I, rn/m, vv/w, cl/d), the digits read
# as letters in names (3 e, 4 a, 5 s, 7 t, 8 b), and the separators and digits a name can be
# padded with. Two names of one skeleton read as one name to a person: an admin's is reserved.
_CONFUSABLE_PAIRS = (("rn", "m"), ("vv", "w"), ("cl", "d"))
_CONFUSABLE_CHARS = str.maketrans(
    {"0": "o", "1": "l", "i": "l", "|": "l", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b"}
)
_PADDING = str.maketrans("", "", "_.- 0123456789")


def skeleton(name: str) -> str:
    """``name`` as a person reads it: NFKC, case-folded, confusable characters folded to one
    of each kind, separators and the digits left stripped, then confusable pairs folded
    (``Warble_Adm1n_`` and ``warbleadmin`` are ``warbleadmln``)."""
    import unicodedata

    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    folded = folded.translate(_CONFUSABLE_CHARS).translate(_PADDING)
    for pair, single in _CONFUSABLE_PAIRS:
        folded = folded.replace(pair, single)
    return folded
