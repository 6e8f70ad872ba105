"""The local runtime's own errors: what it raises at start-up, before any function runs."""

from __future__ import annotations

__all__ = ["ServiceUnavailableError", "UnsupportedTemplateError"]


class ServiceUnavailableError(RuntimeError):
    """A local service (moto, PostgreSQL, Redis) does not answer and could not be started."""


class UnsupportedTemplateError(ValueError):
    """The template asks for something the local runtime does not emulate.

    Raised at start-up with every problem found, each naming the resource (or function and
    event) and the property, so nothing the template asks for is silently ignored.
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__(
            "the local runtime does not support what the template asks for:\n  - "
            + "\n  - ".join(self.problems)
        )
