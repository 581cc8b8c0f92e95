"""compose.yaml runs commands the CLI accepts, with environment variables the CLI reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_compose_runs_redis_api_worker_and_flower(compose):
    services = compose["services"]
    assert sorted(services) == ["api", "flower", "redis", "worker"]
    assert "--appendonly" in services["redis"]["command"] and "yes" in services["redis"]["command"]
    assert services["redis"]["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    assert "ports" not in services["worker"]  # so `--scale worker=N` never collides on a host port
    assert services["flower"]["command"][:3] == ["celery", "--broker=redis://redis:6379/0", "flower"]


@pytest.mark.parametrize("name", ["api", "worker"])
def test_compose_commands_parse_with_the_agentq_cli(compose, name):
    from agentq.cli import build_parser

    command = compose["services"][name]["command"]
    assert command[0] == "agentq"
    args = build_parser().parse_args(command[1:])
    assert args.command == name


@pytest.mark.parametrize("name", ["api", "worker"])
def test_compose_environment_names_only_variables_the_cli_reads(compose, name):
    sources = "".join(path.read_text() for folder in ("agentq", "api") for path in (ROOT / folder).glob("*.py"))
    environment = compose["services"][name]["environment"]
    for variable in environment:
        if variable.startswith("AGENTQ_"):
            assert re.search(rf"[\"']{variable}[\"']", sources), f"{variable} is not read by the CLI"
    assert environment["AGENTQ_REDIS_URL"] == "redis://redis:6379/0"
    assert compose["services"][name]["depends_on"]["redis"]["condition"] == "service_healthy"
