"""Writes of playback: stored streams (imports, stimuli) and deliveries (playbacks and their paint logs)."""
