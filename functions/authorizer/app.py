"""AuthorizerFunction: the HTTP API's Lambda REQUEST authorizer."""

from warble.entrypoints.authorizer import handler

__all__ = ["handler"]
