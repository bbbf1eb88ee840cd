"""The end-to-end tests' browser: pytest-playwright launches Debian's Chromium (no ``playwright install``), 420 px
wide; without it the browser tests skip, unless ``CI=true``: then they fail (``.ci/run`` installs it)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.support.browser_table import CHROMIUM, FLAGS


@pytest.fixture(scope="session")
def browser_type_launch_args() -> dict[str, Any]:
    """pytest-playwright launches Debian's Chromium (a download by ``playwright install`` is not needed)."""
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{CHROMIUM} is missing on CI (.ci/run installs Debian's chromium)")
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium fonts-noto-cjk")
    return {"executable_path": str(CHROMIUM), "args": FLAGS, "headless": True}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_context_args, "viewport": {"width": 420, "height": 900}}
