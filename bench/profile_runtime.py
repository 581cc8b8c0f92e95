"""Where one in-process invocation spends its calls: ``python -m bench.profile_runtime [N] [CHECKOUT]``.

Profiles N invocations of the runtime bench's tool round trip (bench/runtime_bench.py) with cProfile and prints,
per invocation, the calls that matter for a redesign's cost: every function call, pydantic validations, JSON
encodings, and the functions called most. Pass another checkout to profile its code with the same script (run it
with that checkout's own python: ``/other/.venv/bin/python bench/profile_runtime.py 600 /other`` from here), so two
checkouts' counts can be set side by side. Counts, not times, are the evidence: they do not move with the load a
shared machine is under.
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import pstats
import sys
from pathlib import Path

_COUNTED = {
    "calls": lambda name: True,
    "python_calls": lambda name: not name.startswith("~") and not name.startswith("<"),  # builtins aside
    "pydantic_validations": lambda name: "SchemaValidator' objects>" in name and "validate_python" in name,
    "pydantic_inits": lambda name: name.endswith("pydantic/main.py:__init__"),
    "pydantic_setattrs": lambda name: name.endswith("pydantic/main.py:__setattr__"),
    "model_dumps": lambda name: name.endswith("pydantic/main.py:model_dump") or name.endswith("main.py:model_dump_json"),
    "json_dumps": lambda name: name.endswith("json/__init__.py:dumps"),
    "deepcopies": lambda name: name.endswith("copy.py:deepcopy"),
}


def _profile(n: int) -> pstats.Stats:
    from bench.runtime_bench import make_runner, one_invocation

    async def run() -> None:
        runner = make_runner()
        for i in range(50):  # warm caches, as the bench does, so one-time work is not counted
            await one_invocation(runner, i)
        profiler.enable()
        for i in range(n):
            await one_invocation(runner, i)
        profiler.disable()

    profiler = cProfile.Profile()
    asyncio.run(run())
    return pstats.Stats(profiler)


def _name(key: tuple[str, int, str]) -> str:
    path, _line, function = key
    for root in sys.path:  # the same function in two checkouts gets the same name
        if root and path.startswith(root + "/"):
            path = path[len(root) + 1:]
            break
    return f"{path}:{function}"


def main(argv: list[str]) -> None:
    """Print the per-invocation counts as one JSON object, then the 25 most called functions."""
    n = int(argv[0]) if argv else 600
    stats = _profile(n)
    totals = {name: 0 for name in _COUNTED}
    for key, (_primitive, calls, _tottime, _cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        for name, wanted in _COUNTED.items():
            if wanted(_name(key)):
                totals[name] += calls
    per_invocation = {name: round(count / n, 2) for name, count in totals.items()}
    print(json.dumps({"invocations": n, "per_invocation": per_invocation,
                      "profiled_seconds": round(stats.total_tt, 3)}))  # type: ignore[attr-defined]
    if "--all" in sys.argv:  # every function's calls per invocation, to diff two checkouts
        calls = {_name(key): round(row[1] / n, 2) for key, row in stats.stats.items()}  # type: ignore[attr-defined]
        print(json.dumps({"all_calls": calls}))
        return
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][1])[:25]  # type: ignore[attr-defined]
    for key, (_primitive, calls, _tottime, cumtime, _callers) in rows:
        print(f"{calls / n:8.2f}/inv  {cumtime:7.3f}s  {_name(key)[-110:]}")


if __name__ == "__main__":
    args = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
    if len(args) > 1:  # profile another checkout's code: its root goes first on the path
        sys.path.insert(0, str(Path(args[1]).resolve()))
    main(args[:1])
