"""What blocks and mutes answer (API.md's objects): whether the viewer blocks or mutes a user
now."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Blocking:
    """A block's or unblock's answer: whether the viewer blocks the user now."""

    blocking: bool


@dataclass(slots=True)
class Muting:
    """A mute's or unmute's answer: whether the viewer mutes the user now."""

    muting: bool
