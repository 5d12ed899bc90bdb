"""The streams a stored trial shows, rebuilt exactly from its stored spec (deterministic synthesis)."""

from __future__ import annotations

from playback.core.stream import Stream
from playback.models import Stimulus
from studyapp.design import plan as design
from studyapp.models import Study, Trial


def _library(study: Study):
    def lookup(name: str) -> Stream:
        stim = (Stimulus.objects.filter(name=name, owner=study.owner).first()
                or Stimulus.objects.filter(name=name, owner__isnull=True).first())
        if stim is None:
            raise LookupError(f"no stored stimulus called {name!r}")
        return Stream.from_obj(stim.stream)

    return lookup


def trial_streams(study: Study, trial: Trial) -> list[tuple[design.StimulusSpec, Stream]]:
    """(spec, stream) for each stimulus of the trial, in presentation order."""
    out = []
    for raw in trial.spec["stimuli"]:
        spec = design.StimulusSpec.from_dict(raw)
        out.append((spec, design.stimulus_stream(spec, library=_library(study))))
    return out
