"""Benchmarks of two checkouts in one run: ``python -m bench.side_by_side OTHER_CHECKOUT [part ...]``.

For a redesign that must not cost speed: each part runs in the other checkout (with its own ``.venv``) and in
this one, back to back, twice, in the order other, this, this, other: whatever drifts over the run (a machine
warming up, a neighbour's load) weighs on both sides alike, where one pass always runs the second side later.
Each figure a part prints as JSON is matched by name; shown are the two means and their ratio (this checkout /
the other). Rates (``per_second``) should not drop and times (``_ms``) should not grow by more than the
tolerance you hold them to.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .__main__ import PARTS, ROOT

_WATCHED = ("per_second", "rate", "_ms", "ms.", "ratio", "mib", "bytes", "keys")
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
    here = Path(sys.executable)
    for part in parts:
        first_before = _figures(python, other, part)
        first_after = _figures(here, ROOT, part)
        second_after = _figures(here, ROOT, part)
        second_before = _figures(python, other, part)
        before, after = _mean(first_before, second_before), _mean(first_after, second_after)
        print(f"\n=== {part}: {other.name} -> this checkout (means of two runs each) ===")
        print(json.dumps({"part": part, "before": before, "after": after}))  # every figure, for the record
        for name in sorted(before.keys() & after.keys()):
            if any(word in name for word in _WATCHED) and before[name]:
                ratio = after[name] / before[name]
                print(f"  {name:<70} {before[name]:>12.4g} {after[name]:>12.4g}   {ratio:.2f}x")
    return 0


def _mean(one: dict[str, float], two: dict[str, float]) -> dict[str, float]:
    return {name: (one[name] + two[name]) / 2 for name in one.keys() & two.keys()}


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
