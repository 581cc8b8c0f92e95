"""LuaScript: one ``.lua`` file, called by EVALSHA with its KEYS and ARGV named as its header names them.

The header is the one place a script's parameters are written down. A call binds keyword arguments to it::

    -- KEYS: record, lease, [app_state]
    -- ARGV: token, call_ids...

- a plain name is required; names in ``[...]`` at the end of KEYS are optional (left out when None);
- ``name...`` takes a sequence, spliced in place (a script finds its length from a count it is also given, or
  from ``#KEYS``/``#ARGV`` when it is last).

A missing or unknown name raises TypeError before anything is sent, so a call cannot drift from its script.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError

SCRIPTS_DIR = Path(__file__).parent
_DECLARATION = re.compile(r"^-- (uses|KEYS|ARGV): (.*)$")
_CONTINUATION = re.compile(r"^--\s{5,}(\S.*)$")  # aligned under the names; "--   " lines explain them
_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.\.\.)?$")


@dataclass(frozen=True)
class Param:
    name: str
    many: bool = False
    """Takes a sequence (``name...``)."""
    optional: bool = False
    """In ``[...]``: may be None, and is then left out (only at the end of KEYS)."""


class LuaScript:
    """A script known by its SHA1: one EVALSHA round trip per call once the server has it cached."""

    def __init__(self, name: str):
        self.name = name
        body = (SCRIPTS_DIR / f"{name}.lua").read_text()
        header = _read_header(name, body)
        libraries = _libraries(header.get("uses", ""), seen=set())
        self.source = "".join(libraries) + body
        self.keys = _params(name, "KEYS", header.get("KEYS", ""))
        self.args = _params(name, "ARGV", header.get("ARGV", ""))
        clash = {p.name for p in self.keys} & {p.name for p in self.args}
        if clash:
            raise ValueError(f"{name}.lua: {sorted(clash)} named in both KEYS and ARGV")
        self.sha = hashlib.sha1(self.source.encode()).hexdigest()

    def bind(self, **values: object) -> tuple[list, list]:
        """KEYS and ARGV for a call with these named values; TypeError naming what is missing or unknown."""
        unknown = set(values) - {p.name for p in self.keys} - {p.name for p in self.args}
        if unknown:
            raise TypeError(f"{self.name}.lua has no parameter {sorted(unknown)}")
        return _bind(self.name, self.keys, values), _bind(self.name, self.args, values)

    def command(self, **values: object) -> tuple:
        """The EVALSHA command for a pipeline or batch (the caller handles a NoScriptError reply)."""
        script_keys, args = self.bind(**values)
        return ("EVALSHA", self.sha, len(script_keys), *script_keys, *args)

    async def __call__(self, client, *, retry: bool = False, **values: object) -> object:
        """Run the script; with ``retry`` (for scripts safe to run twice), once more after a dropped connection."""
        script_keys, args = self.bind(**values)
        try:
            return await self._run(client, script_keys, args)
        except RedisConnectionError:
            if not retry:
                raise
            return await self._run(client, script_keys, args)

    async def _run(self, client, script_keys: Sequence, args: Sequence) -> object:
        try:
            return await client.evalsha(self.sha, len(script_keys), *script_keys, *args)
        except NoScriptError:
            # The script cache is empty after a restart or SCRIPT FLUSH; loading is a one-off extra trip.
            await client.script_load(self.source)
            return await client.evalsha(self.sha, len(script_keys), *script_keys, *args)


def _read_header(name: str, body: str) -> dict[str, str]:
    header: dict[str, str] = {}
    last = None
    for line in body.splitlines():
        if not line.startswith("--"):
            break
        declared = _DECLARATION.match(line)
        continued = _CONTINUATION.match(line)
        if declared:
            last = declared.group(1)
            if last in header:
                raise ValueError(f"{name}.lua: two '-- {last}:' lines")
            header[last] = declared.group(2)
        elif continued and last is not None:
            header[last] += " " + continued.group(1)
        else:
            last = None
    return header


def _params(script: str, kind: str, declared: str) -> tuple[Param, ...]:
    params: list[Param] = []
    optional = False
    for raw in (part.strip() for part in declared.split(",")):
        if not raw:
            continue
        if raw.startswith("["):
            optional, raw = True, raw[1:]
        raw = raw.rstrip("]")  # an optional group runs to the end of the list
        if not _NAME.match(raw):
            raise ValueError(f"{script}.lua: bad {kind} name {raw!r}")
        if params and (params[-1].optional and not optional):
            raise ValueError(f"{script}.lua: a required {kind} name after an optional one")
        if optional and kind != "KEYS":
            raise ValueError(f"{script}.lua: only KEYS may be optional")
        many = raw.endswith("...")
        params.append(Param(raw.removesuffix("..."), many=many, optional=optional))
    return tuple(params)


def _bind(script: str, params: tuple[Param, ...], values: dict[str, object]) -> list:
    out: list = []
    for param in params:
        if param.name not in values:
            if param.optional:
                continue
            raise TypeError(f"{script}.lua needs {param.name}=")
        value = values[param.name]
        if value is None and param.optional:
            continue
        if param.many:
            if isinstance(value, str | bytes) or not isinstance(value, Sequence):
                raise TypeError(f"{script}.lua: {param.name}= takes a sequence, got {type(value).__name__}")
            out.extend(value)
        else:
            out.append(value)
    return out


def _libraries(uses: str, seen: set[str]) -> list[str]:
    """The sources of the named libraries and of those they use, each once, dependencies first."""
    out: list[str] = []
    for name in (part.strip() for part in uses.split(",")):
        if not name or name in seen:
            continue
        seen.add(name)
        body = (SCRIPTS_DIR / "lib" / f"{name}.lua").read_text()
        out += _libraries(_read_header(f"lib/{name}", body).get("uses", ""), seen)
        out.append(body if body.endswith("\n") else body + "\n")
    return out
