"""One headless Chromium for the explorer's page tests."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest


def _find_chromium() -> str | None:
    return next(
        (
            found
            for name in ("chromium", "chromium-browser", "google-chrome")
            if (found := shutil.which(name))
        ),
        None,
    )


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the whole session (Playwright driving the system's Chromium)."""
    executable = _find_chromium()
    if executable is None:
        pytest.skip("no Chromium on PATH (Debian: apt-get install chromium): explorer browser tests skipped")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed: explorer browser tests skipped"
    )
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


@dataclass
class OpenedPage:
    """A page loaded from a file, with what it printed to the console and every request it made."""

    page: object
    problems: list[str]
    requests: list[str]

    def row(self, module_path: str):
        return self.page.locator(f'.row[data-module="{module_path}"]')


@pytest.fixture
def open_page(browser):
    pages = []

    def opener(html_file: Path, width: int = 1400, height: int = 800) -> OpenedPage:
        page = browser.new_page(viewport={"width": width, "height": height})
        # generous: a loaded CI machine can take seconds to paint; a broken page still fails
        page.set_default_timeout(30_000)
        pages.append(page)
        opened = OpenedPage(page, [], [])
        page.on("console", lambda message: opened.problems.append(f"{message.type}: {message.text}"))
        page.on("pageerror", lambda error: opened.problems.append(f"page error: {error}"))
        page.on("request", lambda request: opened.requests.append(request.url))
        page.goto(html_file.resolve().as_uri())
        page.wait_for_selector("body[data-ready]")
        return opened

    yield opener
    for page in pages:
        page.close()
