"""Moving around the app as a person does, at any width, and watching what the page sends.

A phone-wide page (390 px) shows the first tabs and a "More tabs" menu for the rest; a person
opens the menu and picks the tab. The requests a page sends to the queue tell a test which
events ran (and that one did not), without timing anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import expect

DESKTOP = {"width": 1400, "height": 1000}
PHONE = {"width": 390, "height": 844}


def open_tab(page, name: str) -> None:
    """Click the tab named `name`, through the overflow menu when the screen is too narrow."""
    tab = page.get_by_role("tab", name=name, exact=True)
    more = page.locator('button[aria-label="More tabs"]:visible').first
    expect(tab.or_(more).first).to_be_visible()
    if tab.is_visible():
        tab.click()
        return
    more.click()
    page.locator(".overflow-dropdown button:visible", has_text=name).first.click()


@dataclass
class Sent:
    """The inputs of every event the page sent to the server's queue, in order."""

    events: list[list[Any]] = field(default_factory=list)

    def watch(self, page) -> Sent:
        page.on("request", self._record)
        return self

    def _record(self, request) -> None:
        if request.method == "POST" and "/queue/join" in request.url:
            self.events.append(json.loads(request.post_data or "{}").get("data") or [])

    def count(self, predicate) -> int:
        return sum(1 for data in list(self.events) if predicate(data))
