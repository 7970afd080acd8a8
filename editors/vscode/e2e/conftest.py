"""A screenshot of the page when a test fails, beside the screenshots of the steps."""

from __future__ import annotations

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    page = getattr(item, "funcargs", {}).get("page")
    if report.when == "call" and report.failed and page is not None:
        from test_real_vscode import shot

        shot(page, f"failed-{item.name}")
    return report
