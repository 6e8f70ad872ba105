"""What likes answer (API.md's objects): whether the viewer likes a tweet now."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class LikeAnswer:
    """Whether I like the tweet now (``PUT`` and ``DELETE /v1/tweets/{id}/like``)."""

    liked: bool
