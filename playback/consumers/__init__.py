"""Websocket consumers of playback: the playback socket and the clock socket."""
