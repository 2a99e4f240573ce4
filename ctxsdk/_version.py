"""The package's version, in a module of its own: the base reads it (a workspace's summary
cache is tagged with it) without importing the package's top level, which sits above it."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
