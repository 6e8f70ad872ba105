"""AuthorizerFunction: the HTTP API's Lambda REQUEST authorizer."""

from warble.authorizer import handler

__all__ = ["handler"]
