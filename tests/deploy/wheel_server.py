"""The lock's wheels for the base image, downloaded on this host (deploy/wheelhouse.py) and served on loopback
for the image build (the Dockerfile's WHEELHOUSE build arg), since the build cannot reach PyPI itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.deploy.compose_stack import ROOT, free_port, run, say

WHEELHOUSE_PORT = 47913
"""The wheelhouse's usual port: the same WHEELHOUSE build arg on every run keeps Docker's build cache valid (a
changed build arg rebuilds every step after it, installing all dependencies again)."""


class Wheelhouse:
    """The lock's wheels for the base image, downloaded on this host and served on loopback for the build."""

    def __init__(self, base_image: str, folder: Path):
        self.base_image = base_image
        self.folder = folder
        self.port = free_port(WHEELHOUSE_PORT)
        self._server: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def __enter__(self) -> Wheelhouse:
        count = run(sys.executable, str(ROOT / "deploy" / "wheelhouse.py"), "--image", self.base_image,
                    "--dest", str(self.folder)).strip()
        say(f"wheelhouse: {count} wheels for {self.base_image} in {self.folder}")
        self._server = subprocess.Popen(
            [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(self.port), "--directory",
             str(self.folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.terminate()
            self._server.wait()
