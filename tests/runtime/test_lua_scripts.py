"""The Lua scripts: one ``.lua`` file each, headers that name every KEYS and ARGV slot, calls bound by name."""

from __future__ import annotations

import re

import pytest

from runtime.redis_store import scripts
from runtime.redis_store.lua import LuaScript
from runtime.redis_store.lua.script import SCRIPTS_DIR

_INDEX = re.compile(r"\b(KEYS|ARGV)\[(\d+)\]")


def _body(script: LuaScript) -> str:
    return (SCRIPTS_DIR / f"{script.name}.lua").read_text()


def test_every_lua_file_is_loaded_by_the_registry_and_every_library_is_used():
    files = {str(path.relative_to(SCRIPTS_DIR).with_suffix("")) for path in SCRIPTS_DIR.rglob("*.lua")}
    libraries = {name for name in files if name.startswith("lib/")}
    assert files - libraries == set(scripts.ALL)
    # used by a script, or by a library a script uses (a script's source carries every library it needs)
    used = {name for name in libraries for script in scripts.ALL.values()
            if (SCRIPTS_DIR / f"{name}.lua").read_text() in script.source}
    assert libraries == used


@pytest.mark.parametrize("name", sorted(scripts.ALL))
def test_a_script_reads_no_slot_its_header_does_not_name(name):
    script = scripts.ALL[name]
    declared = {"KEYS": script.keys, "ARGV": script.args}
    for kind, index in _INDEX.findall(_body(script)):
        params = declared[kind]
        if any(p.many for p in params):
            continue  # a list: its length comes with the call
        assert int(index) <= len(params), f"{name}.lua reads {kind}[{index}], its header names {len(params)}"


def test_a_library_is_sent_once_in_front_of_the_scripts_that_use_it():
    source = scripts.CANCEL.source
    assert source.count("local function trim_stream(") == 1 and source.count("local function notify(") == 1
    assert source.index("local function notify(") < source.index("-- Cancel an invocation")
    assert scripts.COMMIT_EVENT.source.count("local function hset_from(") == 1
    assert "local function hset_from(" not in scripts.SETTLE.source  # only what a script names


def test_named_values_bind_in_header_order_with_lists_spliced_and_optional_keys_left_out():
    keys, args = scripts.COMMIT_EVENT.bind(
        meta="m", state="s", user_state="u", events="e", times="t", stream="x", fence_meta="m", fence="f",
        active="a",
        expected_version=3, fence_token="", event_json="{}", timestamp="1.0", invocation_id="i",
        maxlen=10, slack=1, max_age_ms=0, state_pairs=["0", "0", "0"])
    assert keys == ["m", "s", "u", "e", "t", "x", "m", "f", "a"]
    assert args == [3, "", "{}", "1.0", "i", 10, 1, 0, "0", "0", "0"]
    keys, _ = scripts.READ_SESSION.bind(meta="m", state="s", user_state="u", events="e", times="t",
                                        app_state="p", recent=0, after="")
    assert keys == ["m", "s", "u", "e", "t", "p"]


def test_a_call_that_misses_or_invents_a_name_or_passes_a_string_for_a_list_is_refused_before_sending():
    with pytest.raises(TypeError, match=r"invocations/heartbeat.lua needs lease_ms="):
        scripts.HEARTBEAT.bind(lease="l", token="t")
    with pytest.raises(TypeError, match=r"has no parameter \['ttl'\]"):
        scripts.HEARTBEAT.bind(lease="l", token="t", lease_ms=1, ttl=2)
    with pytest.raises(TypeError, match="takes a sequence"):
        scripts.CONSUME.bind(record="r", lease="l", token="t", response_fields="r:1")


def test_the_command_form_is_the_evalsha_a_batch_sends():
    command = scripts.HEARTBEAT.command(lease="l", token="t", lease_ms=5)
    assert command == ("EVALSHA", scripts.HEARTBEAT.sha, 1, "l", "t", 5)


async def test_every_script_compiles_on_a_real_redis_server(redis_url):
    import redis.asyncio as aioredis

    async with aioredis.Redis.from_url(redis_url) as client:
        for script in scripts.ALL.values():
            assert await client.script_load(script.source) == script.sha


async def test_a_script_forgotten_by_the_server_is_loaded_again_on_its_next_call(redis_url):
    import redis.asyncio as aioredis

    async with aioredis.Redis.from_url(redis_url) as client:
        await client.set("lease", "tok")
        assert await scripts.HEARTBEAT(client, lease="lease", token="tok", lease_ms=5000) == 1
        await client.script_flush()
        assert await scripts.HEARTBEAT(client, lease="lease", token="other", lease_ms=5000) == 0
        assert await client.script_exists(scripts.HEARTBEAT.sha) == [True]
        assert 0 < await client.pttl("lease") <= 5000


def _script_calls():
    """Every call of a script constant in the product code: (file, line, script, keyword names, has ** spread)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    names = {name for name, value in vars(scripts).items() if isinstance(value, LuaScript)}
    for package in ("runtime", "worker", "api", "agentq"):
        for path in (root / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr in ("command", "bind"):
                    func = func.value
                if isinstance(func, ast.Name) and func.id in names:
                    keywords = {k.arg for k in node.keywords if k.arg is not None}
                    spread = any(k.arg is None for k in node.keywords)
                    yield path.relative_to(root), node.lineno, getattr(scripts, func.id), keywords, spread


def test_every_call_in_the_code_names_only_its_scripts_parameters_and_all_of_them_unless_it_spreads_a_map():
    calls = list(_script_calls())
    assert len({call[2].name for call in calls}) == len(scripts.ALL)  # every script is called somewhere
    for path, line, script, keywords, spread in calls:
        params = {p.name for p in (*script.keys, *script.args)}
        required = {p.name for p in (*script.keys, *script.args) if not p.optional}
        assert keywords - {"retry"} <= params, f"{path}:{line} passes {sorted(keywords - params)} to {script.name}"
        if not spread:
            assert required <= keywords, f"{path}:{line} leaves out {sorted(required - keywords)} of {script.name}"
