"""Reads of the dashboard, one module per page family."""
