"""Autobahn formats its websocket debug-log arguments only when a line is written, not on every frame.

Autobahn's ``sendData`` (every websocket frame Daphne sends) logs each write at debug level, and its arguments
are built before the call: ``hltype(self.sendData)``, ``hlval(self.peer)`` and ``hlval(len(data))`` look the
method's qualified name up and colour three strings with ``click.style``. txaio turns ``log.debug`` into a no-op
below debug level, yet the arguments are built anyway: about a sixth of a Daphne process's time while it paced
500 live streams (py-spy, benchmarks/pacing.py; docs/deploy.md). ``install()`` makes the websocket protocol
module's ``hltype`` and ``hlval`` return a placeholder that does that formatting when the logger turns it into
text, so a debug log reads exactly as before and nothing is formatted when it is not written. Both names are
only ever used as log arguments there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_INSTALLED = "_pacelab_lazy_log_args"


class LaterText:
    """``fn(*args, **kwargs)``, computed when (and each time) the value is turned into text."""

    __slots__ = ("fn", "args", "kwargs")

    def __init__(self, fn: Callable[..., str], args: tuple, kwargs: dict[str, Any]) -> None:
        self.fn, self.args, self.kwargs = fn, args, kwargs

    def __str__(self) -> str:
        return str(self.fn(*self.args, **self.kwargs))

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def _later(fn: Callable[..., str]) -> Callable[..., LaterText]:
    def build(*args: Any, **kwargs: Any) -> LaterText:
        return LaterText(fn, args, kwargs)

    build.__doc__ = f"``{fn.__name__}``, formatted only when the log line is written."
    return build


def install() -> bool:
    """Patch ``autobahn.websocket.protocol``'s ``hltype`` and ``hlval`` once; False when it already was."""
    from autobahn.websocket import protocol

    if getattr(protocol, _INSTALLED, False) or not all(hasattr(protocol, n) for n in ("hltype", "hlval")):
        return False
    protocol.hltype = _later(protocol.hltype)
    protocol.hlval = _later(protocol.hlval)
    setattr(protocol, _INSTALLED, True)
    return True


def installed() -> bool:
    from autobahn.websocket import protocol

    return bool(getattr(protocol, _INSTALLED, False))
