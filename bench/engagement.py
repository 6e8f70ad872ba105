"""Placeholder: groups are registered here (see bench/__init__.py)."""
