"""URL configurations of playback: ``streams`` (mounted at /streams/) and ``playground`` (at /playground/)."""
