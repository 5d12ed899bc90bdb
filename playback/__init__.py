"""Streams: the stream core (pure Python), trace import, synthesis, and their Django shells."""
