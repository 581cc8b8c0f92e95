"""Small conversions between Python values and what Redis hashes and replies hold."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def text(value: Any) -> str:
    """A reply value as str, whether the client decodes responses or not."""
    return value.decode() if isinstance(value, bytes) else value


def flat_to_dict(flat: list) -> dict[str, str]:
    """A flat [field, value, field, value, ...] reply (HGETALL inside Lua) as a dict of str."""
    return {text(flat[i]): text(flat[i + 1]) for i in range(0, len(flat), 2)}


def decode_state(flat_or_map: list | Mapping) -> dict[str, Any]:
    """A state hash (JSON values) as a dict."""
    pairs = flat_to_dict(flat_or_map) if isinstance(flat_or_map, list) else flat_or_map
    return {text(key): json.loads(value) for key, value in pairs.items()}


def encode_pairs(values: Mapping[str, Any]) -> list[str]:
    """Script arguments for a hash update: the pair count, then field, JSON value, field, JSON value, ..."""
    args: list[str] = [str(len(values))]
    for key, value in values.items():
        args += [key, json.dumps(value, separators=(",", ":"))]
    return args


def json_mapping(values: Mapping[str, Any]) -> dict[str, str]:
    """A state delta as an HSET mapping of JSON values."""
    return {key: json.dumps(value, separators=(",", ":")) for key, value in values.items()}
