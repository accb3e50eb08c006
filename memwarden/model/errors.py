"""One error type for user mistakes (usage, configuration, bad input files).

Front ends turn a MemwardenError into its message on stderr and exit code 2; nothing a
user can cause should ever surface as a traceback.
"""

from __future__ import annotations


class MemwardenError(Exception):
    """A usage or configuration error: the message says what is wrong and where."""

    exit_code = 2


class ConfigError(MemwardenError):
    """memwarden.toml (or a CLI override of it) is invalid."""


class EncodingUnavailable(ConfigError):
    """A token encoding cannot be loaded offline or failed its hash check."""
