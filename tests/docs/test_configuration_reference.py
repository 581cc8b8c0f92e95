"""docs/configuration.md names every AGENTQ_* environment variable the product code reads."""

from __future__ import annotations

import re

from .markdown_blocks import REPO

PRODUCT = ("runtime", "worker", "api", "agentq", "examples")
VARIABLE = re.compile(r"AGENTQ_[A-Z0-9]+(?:_[A-Z0-9]+)*\b")
BUILT_FROM_PARTS = {"AGENTQ_OIDC_PRINCIPAL_CLAIM", "AGENTQ_OIDC_USERS_CLAIM", "AGENTQ_OIDC_APPS_CLAIM",
                    "AGENTQ_OIDC_ROLES_CLAIM"}
"""Read as f"AGENTQ_OIDC_{name.upper()}" (api/access/oidc.py), so no source line spells them out."""


def _read_by_the_code() -> set[str]:
    names: set[str] = set(BUILT_FROM_PARTS)
    for package in PRODUCT:
        for source in (REPO / package).rglob("*.py"):
            names.update(VARIABLE.findall(source.read_text()))
    return names


def test_the_configuration_reference_names_every_agentq_variable_the_code_reads():
    reference = (REPO / "docs" / "configuration.md").read_text()
    read = _read_by_the_code()
    missing = sorted(name for name in read if f"`{name}`" not in reference and name not in reference)
    print(f"{len(read)} AGENTQ_* variables read by the code, {len(read) - len(missing)} in docs/configuration.md")
    assert not missing, f"docs/configuration.md does not name {missing}"
