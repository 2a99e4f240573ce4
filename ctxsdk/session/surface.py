"""Old name of ``_replay`` while the tree moves over (removed once nothing imports it)."""

from ._replay import *  # noqa: F403
from ._replay import replay_into as fold_into
from ._replay import replay_log as fold_log

__all__ = ["fold_into", "fold_log"]
