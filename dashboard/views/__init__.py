"""Dashboard pages, one module per page family (urls.py routes them)."""
