"""Reading the fenced code blocks of the README and the pages under docs/, and the links between them.

A block is run by tests/docs/test_code_blocks.py when its language is Python (``python``, ``py``) or shell
(``sh``, ``bash``, ``shell``). A block that cannot run offline (it needs Docker, a production Redis, a provider's
OAuth app) carries a visible marker on the line before its fence: ``<!-- not run: <why> -->``. Blocks of other
languages (``text``, ``json``, none) show output or data and are not run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PYTHON = ("python", "py")
SHELL = ("sh", "bash", "shell")
NOT_RUN = re.compile(r"<!--\s*not run:\s*(?P<why>.+?)\s*-->")
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)")


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, its language, its text, and why it is not run (None: it is run)."""

    page: Path
    line: int
    lang: str
    text: str
    not_run: str | None

    @property
    def runnable(self) -> bool:
        """A Python or shell block: run unless marked."""
        return self.lang in PYTHON + SHELL

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def pages() -> list[Path]:
    """README.md and every page under docs/, in a stable order."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of ``page``, in order."""
    lines = page.read_text().splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence = opening["fence"]
        body: list[str] = []
        end = index + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            body.append(lines[end])
            end += 1
        previous = next((lines[i] for i in range(index - 1, -1, -1) if lines[i].strip()), "")
        marker = NOT_RUN.search(previous)
        found.append(Block(page, index + 1, opening["lang"].lower(), "\n".join(body) + "\n",
                           marker["why"] if marker else None))
        index = end + 1
    return found


LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")


def relative_links(page: Path) -> list[tuple[int, str]]:
    """``(line, target)`` of each relative link of ``page`` outside code blocks (no scheme, not an anchor)."""
    links: list[tuple[int, str]] = []
    inside = False
    for number, line in enumerate(page.read_text().splitlines(), start=1):
        if FENCE.match(line):
            inside = not inside
            continue
        if inside:
            continue
        for match in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            target = match["target"]
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            links.append((number, target))
    return links
