"""Headless Chromium for the browser tests: Debian's ``chromium`` and ``chromium-driver``, installed when missing.

On a fresh machine ``make test`` alone must be enough, so the first browser test installs the two packages
with apt-get (as root). When that is impossible the test is skipped with the reason, except in CI
(``CI=true``), where a missing browser is a failure: a green CI must mean the browser test ran.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

PACKAGES = ("chromium", "chromium-driver")
# Without the background-networking flags Chromium keeps trying to reach Google's services, which a closed
# network turns into stalls; --disable-quic for the same reason.
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1400,1000",
)


def unavailable(reason: str) -> None:
    """Skip the test for ``reason``; in CI (``CI=true``) fail it instead."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser test cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def _binaries() -> tuple[str, str] | None:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    return (chromium, driver) if chromium and driver else None


def _apt_get(*args: str) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # Wait for another apt-get holding dpkg's lock (a parallel run, unattended upgrades) instead of failing.
    command = ["apt-get", "-o", "DPkg::Lock::Timeout=600", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        unavailable(f"{' '.join(command)} failed ({done.returncode}): {(done.stderr or done.stdout)[-1500:]}")


def ensure_chromium() -> tuple[str, str]:
    """``(chromium, chromedriver)`` paths, installing Debian's packages (apt-get update, then install) if needed."""
    found = _binaries()
    if found:
        return found
    if not shutil.which("apt-get"):
        unavailable(f"chromium/chromedriver are not installed and there is no apt-get to install {PACKAGES}")
    if os.geteuid() != 0:
        unavailable(f"chromium/chromedriver are not installed; installing {PACKAGES} with apt-get needs root")
    # One installer at a time when several test processes start together.
    with open(Path(tempfile.gettempdir()) / "agentq-chromium-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _binaries() is None:
            _apt_get("update")
            _apt_get("install", "-y", *PACKAGES)
    found = _binaries()
    if found is None:
        unavailable(f"apt-get installed {PACKAGES} but chromium/chromedriver are not on PATH")
    return found


def headless_chromium(user_data_dir: Path):
    """A selenium Chrome driver on Debian's headless Chromium with a fresh profile in ``user_data_dir``."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        unavailable("selenium is not installed (it is in the dev extra: pip install -e '.[dev]')")
    chromium, chromedriver = ensure_chromium()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium  # with both paths given, selenium never downloads a browser or driver
    for flag in (*FLAGS, f"--user-data-dir={user_data_dir}"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))
