"""Warble's shared package: domain rules, data access and the HTTP skeleton, shipped as a layer."""
