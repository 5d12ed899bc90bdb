"""Autobahn's websocket log arguments: built as placeholders on every frame, formatted (exactly as Autobahn
would) only when a log line is written."""

from autobahn import util
from autobahn.websocket import protocol

from pacelab import lazy_ws_logs


def test_install_is_idempotent_and_patches_the_protocol_module():
    lazy_ws_logs.install()
    assert not lazy_ws_logs.install() and lazy_ws_logs.installed()
    assert isinstance(protocol.hltype(test_install_is_idempotent_and_patches_the_protocol_module),
                      lazy_ws_logs.LaterText)


def test_nothing_is_formatted_until_the_text_is_asked_for_and_then_it_reads_as_before(monkeypatch):
    lazy_ws_logs.install()
    calls = []
    real_hl = util.hl

    def counting_hl(*args, **kwargs):
        calls.append(args)
        return real_hl(*args, **kwargs)

    monkeypatch.setattr(util, "hl", counting_hl)
    sender = protocol.WebSocketProtocol.sendData
    args = (protocol.hltype(sender), protocol.hlval("tcp4:127.0.0.1:5555"), protocol.hlval(1234, color="green"))
    assert calls == []  # what a frame's send costs now: three small objects, no lookups, no colours
    assert [str(a) for a in args] == [util.hltype(sender), util.hlval("tcp4:127.0.0.1:5555"),
                                      util.hlval(1234, color="green")]
    assert calls  # formatted on demand, by Autobahn's own functions
    line = f"{args[0]} sent {args[2]} bytes for peer {args[1]}"
    assert line == f"{util.hltype(sender)} sent {util.hlval(1234, color='green')} bytes for peer " \
                   f"{util.hlval('tcp4:127.0.0.1:5555')}"
