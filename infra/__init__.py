"""Warble's infrastructure code: database migrations and the local runtime."""
