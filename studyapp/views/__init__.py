"""Participant pages."""
