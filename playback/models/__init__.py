"""Playback's models: stored streams (``streams``) and deliveries (``delivery``). Django finds an app's models in
``<app>.models``, so this package imports both; code imports a model from its own module."""

from playback.models.delivery import PaintReport, Playback
from playback.models.streams import Stimulus, Trace

__all__ = ["PaintReport", "Playback", "Stimulus", "Trace"]
