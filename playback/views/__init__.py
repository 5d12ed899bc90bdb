"""Pages of playback: stored streams, the designer playground and the standalone player test page."""
