"""The playback core (pure Python, no Django): streams, their timing, tokenizers, synthesis, trace importers,
the websocket protocol, pacing and fidelity. Loads without Django settings (the pure-cores contract)."""
