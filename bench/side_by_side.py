"""Benchmarks of two checkouts in one run: ``python -m bench.side_by_side OTHER_CHECKOUT [part ...]``.

For a redesign that must not cost speed: each part runs in the other checkout (with its own ``.venv``) and then
in this one, back to back, so both see the same machine. The figures each part prints as JSON are matched by
name and shown with their ratio (this checkout / the other). Rates (``per_second``) should not drop and times
(``_ms``) should not grow by more than the tolerance you hold them to.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .__main__ import PARTS, ROOT

_WATCHED = ("per_second", "_ms", "ratio")
"""Figure names worth comparing (rates, latencies, ratios against anchors); counts and settings are left out."""


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    other, parts = Path(argv[0]).resolve(), argv[1:] or list(PARTS)
    python = other / ".venv" / "bin" / "python"
    if not python.exists():
        print(f"{other} has no .venv: create one there first", file=sys.stderr)
        return 2
    for part in parts:
        before = _figures(python, other, part)
        after = _figures(Path(sys.executable), ROOT, part)
        print(f"\n=== {part}: {other.name} -> this checkout ===")
        for name in sorted(before.keys() & after.keys()):
            if any(word in name for word in _WATCHED) and before[name]:
                ratio = after[name] / before[name]
                print(f"  {name:<70} {before[name]:>12.4g} {after[name]:>12.4g}   {ratio:.2f}x")
    return 0


def _figures(python: Path, checkout: Path, part: str) -> dict[str, float]:
    """Run one bench part in ``checkout``; every number in the JSON objects it printed, by dotted name."""
    done = subprocess.run([str(python), "-m", *PARTS[part]], cwd=checkout, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"{part} failed in {checkout}:\n{done.stderr[-2000:]}", file=sys.stderr)
        return {}
    figures: dict[str, float] = {}
    decoder = json.JSONDecoder()
    text = done.stdout
    for start in (i for i, ch in enumerate(text) if ch == "{" and (i == 0 or text[i - 1] == "\n")):
        try:
            value, _end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        _flatten(value, "", figures)
    return figures


def _flatten(value: object, prefix: str, out: dict[str, float]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        out.setdefault(prefix, float(value))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
