"""The dashboard's pure core (no Django): quality reports, bonuses, panel reconciliation, the replay of a playback."""
