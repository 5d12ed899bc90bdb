"""The dashboard's websocket consumers: the live study snapshot and an analysis run's progress."""
