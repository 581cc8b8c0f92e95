"""The runtime lock (requirements.lock, what the Docker image installs) holds what the worker's transports import."""

from __future__ import annotations

import re
from importlib.metadata import requires
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def _locked(path: Path) -> set[str]:
    return {match.group(1).lower().replace("_", "-")
            for match in re.finditer(r"^([A-Za-z0-9_.-]+)==", path.read_text(), re.MULTILINE)}


def test_the_runtime_lock_holds_every_requirement_of_kombus_redis_transport():
    # kombu's Redis transport imports packaging; without kombu's redis extra the image's workers and Flower
    # crash-looped on ModuleNotFoundError while the dev lock (pytest brings packaging) hid it
    wanted = {Requirement(line).name.lower() for line in requires("kombu") or []
              if Requirement(line).marker is not None and Requirement(line).marker.evaluate({"extra": "redis"})}
    assert wanted and wanted <= _locked(ROOT / "requirements.lock")
