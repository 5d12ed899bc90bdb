"""ASGI entry point: HTTP through Django, websockets through Channels with the Origin checked."""

import gc
import os
import sys

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pacelab.settings")
django_asgi_app = get_asgi_application()

import logging  # noqa: E402

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402
from django.urls import get_resolver  # noqa: E402

from pacelab import static  # noqa: E402
from pacelab.proxy import TrustedProxyMiddleware, parse_networks  # noqa: E402
from pacelab.routing import websocket_urlpatterns  # noqa: E402
from pacelab.ws_fast_send import FastSendMiddleware  # noqa: E402
from pacelab.ws_session import WebsocketAuthStack  # noqa: E402

logging.getLogger("pacelab").info(static.describe())  # said at the start of every process (issue 41)
http_app = django_asgi_app
if settings.SERVE_STATIC:
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    http_app = ASGIStaticFilesHandler(django_asgi_app)

# Outermost: under Daphne a websocket's scope offers the socket's short frame-write path (it only reads ``send``;
# pacelab/ws_fast_send.py). Then the client's address and scheme are settled before anything reads them (Daphne
# runs without --proxy-headers; forwarded headers count only from TRUSTED_PROXIES).
application = FastSendMiddleware(TrustedProxyMiddleware(ProtocolTypeRouter(
    {
        "http": http_app,
        "websocket": AllowedHostsOriginValidator(WebsocketAuthStack(URLRouter(websocket_urlpatterns))),
    }
), trusted=parse_networks(settings.TRUSTED_PROXIES)))

# Latency tuning for the process that paces live streams (docs/deploy.md, "Pacing latency"; measured by
# benchmarks/pacing.py). Everything imported so far lives as long as the process: freezing it takes it out of
# the collector's reach, so full collections walk only what connections create (a full pass over the ~100,000
# objects of a started Django + Channels + Daphne process stalls the event loop for 60 ms on these machines).
# Full passes come after 100 middle-generation passes instead of 10, so that hundreds of sockets connecting
# at once (each leaves a few hundred long-lived objects) do not set off several of them in a row; cyclic
# garbage from closed connections waits a little longer. A worker thread (the ORM, off the event loop) gives
# the interpreter lock back after 1 ms instead of 5, so it cannot hold the event loop's next deadline longer.
_ = get_resolver().url_patterns  # import every view now, not at the first request, so that it is frozen too
gc.freeze()
gc.set_threshold(gc.get_threshold()[0], gc.get_threshold()[1], 100)
sys.setswitchinterval(0.001)
# Under Daphne, websocket frames go out at once rather than on the next reactor turn (pacelab/eager_writes.py).
if "daphne.server" in sys.modules:
    from pacelab import eager_writes

    eager_writes.install()
    # Bodies over MAX_REQUEST_BODY_BYTES are refused by Daphne before they are held (pacelab/body_limit.py).
    from pacelab import body_limit

    body_limit.install(settings.MAX_REQUEST_BODY_BYTES)
