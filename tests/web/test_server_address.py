"""Issue 14: a page served on every interface prints an address another
device can open (never ``http://0.0.0.0:...``)."""

from __future__ import annotations

import httpx

from tablesense.outputs.events import EventBus
from tablesense.web.server import lan_address, serve_display


def test_a_page_on_every_interface_prints_a_reachable_address() -> None:
    bus = EventBus()
    server = serve_display(bus, host="0.0.0.0", port=0)
    try:
        assert "0.0.0.0" not in server.url
        assert server.url.startswith(f"http://{lan_address()}:")
        assert httpx.get(server.url + "healthz", timeout=5).json()["ok"] is True
    finally:
        server.stop()
        bus.close()
