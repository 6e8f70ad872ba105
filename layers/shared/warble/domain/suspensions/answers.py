"""What the suspension routes answer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Suspension:
    """``{"suspended": true | false}``: whether the account is suspended now."""

    suspended: bool
