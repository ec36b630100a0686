"""Suite-wide settings."""

from __future__ import annotations

from hypothesis import settings

# The machines running the suite are shared and noisy: property tests check behaviour, not speed.
settings.register_profile("passhat", deadline=None, derandomize=False)
settings.load_profile("passhat")
