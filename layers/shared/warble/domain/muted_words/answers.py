"""What the muted-words routes answer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class MutedWords:
    """``{"words": [...]}``: the viewer's muted words, as given (trimmed), in order."""

    words: list[str]
