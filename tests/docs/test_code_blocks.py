"""Every Python and shell block of the README and of docs/*.md runs offline as written (tests/docs/page_session.py
says how), and the README stays a front door: at most 300 lines, every relative link of the docs reaching a file.

A block that cannot run offline carries a visible ``<!-- not run: <why> -->`` line before its fence; those are
counted and kept few.
"""

from __future__ import annotations

import pytest

from .markdown_blocks import REPO, blocks, pages, relative_links
from .page_session import PageSession

MAX_README_LINES = 300
MAX_NOT_RUN = 12
"""Blocks marked as not run (Docker, a provider's OAuth app, the whole suite): a handful, not the habit."""

PAGES_WITH_RUNS = [page for page in pages() if any(b.runnable and b.not_run is None for b in blocks(page))]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("page", PAGES_WITH_RUNS, ids=[str(p.relative_to(REPO)) for p in PAGES_WITH_RUNS])
def test_every_python_and_shell_block_of_the_page_runs_offline_as_written(page, tmp_path):
    to_run = [block for block in blocks(page) if block.runnable and block.not_run is None]
    session = PageSession(tmp_path)
    try:
        for block in to_run:
            session.run(block)
    finally:
        session.close()
    print(session.report())
    print(f"{page.relative_to(REPO)}: {len(to_run)} blocks run")
    assert len(session.transcript) == len(to_run)


def test_the_docs_run_most_of_their_code_blocks_and_mark_the_few_they_cannot():
    every = [block for page in pages() for block in blocks(page) if block.runnable]
    marked = [block for block in every if block.not_run is not None]
    run = len(every) - len(marked)
    print(f"code blocks: {len(every)} Python and shell blocks, {run} run offline, {len(marked)} marked not run:")
    for block in marked:
        print(f"  {block.where}: {block.not_run}")
    assert all(block.not_run.strip() for block in marked)
    assert len(marked) <= MAX_NOT_RUN, [block.where for block in marked]
    assert run >= 2 * len(marked)


def test_the_readme_is_a_front_door_of_at_most_300_lines():
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


def test_every_relative_link_of_the_readme_and_the_docs_reaches_a_file():
    broken = []
    for page in pages():
        for line, target in relative_links(page):
            path = (page.parent / target.split("#")[0]).resolve()
            if not path.exists():
                broken.append(f"{page.relative_to(REPO)}:{line}: {target}")
    assert not broken, broken
