"""The sub-packages of ``worker/`` and ``api/`` keep their places (docs/architecture.md, "Where things are").

Read from the source with ``ast`` (``tests.runtime.import_graph``; nothing is imported). In ``worker/``,
``config`` is the bottom (it imports no other worker package) and ``running`` the top (only the Celery entry
points import it); ``records``, ``fleet``, ``queues`` and ``webhooks`` sit between and still import each other.
In ``api/``, ``access`` is the bottom (besides the settings and the error mapping it is read by), the doors
never reach up to the adapters that call them, and the routes are imported only by the app (and the /run_sse
fast lane, which serves one of them).
"""

from __future__ import annotations

import pytest

from tests.runtime.import_graph import import_graph


def package_edges(top: str) -> set[tuple[str, str]]:
    """(importer's package, imported package) for every import between two different sub-packages of ``top``;
    a module directly under ``top`` counts as its own package."""
    edges = set()
    for importer, imported in ((a, b) for a, targets in import_graph(package=top).items() for b in targets):
        source, target = ".".join(importer.split(".")[:2]), ".".join(imported.split(".")[:2])
        if source != target and target != top:
            edges.add((source, target))
    return edges


def importers_of(top: str, package: str) -> set[str]:
    return {source for source, target in package_edges(top) if target == package}


def imported_by(top: str, package: str) -> set[str]:
    return {target for source, target in package_edges(top) if source == package}


def test_worker_config_is_the_bottom_and_imports_no_other_worker_package():
    assert imported_by("worker", "worker.config") == set()


def test_only_the_celery_entry_points_import_how_an_invocation_runs():
    assert importers_of("worker", "worker.running") <= {"worker.tasks", "worker.celery_main"}


@pytest.mark.parametrize("package", ["worker.records", "worker.fleet", "worker.queues", "worker.webhooks",
                                     "worker.schedules", "worker.config"])
def test_no_lower_worker_package_imports_the_client(package):
    assert "worker.client" not in imported_by("worker", package)


def test_api_access_reads_only_the_settings_and_the_error_mapping():
    assert imported_by("api", "api.access") <= {"api.settings", "api.errors"}


def test_the_doors_never_reach_up_to_their_adapters():
    assert imported_by("api", "api.doors") & {"api.routes", "api.a2a", "api.app", "api.streams"} == set()


def test_the_routes_are_imported_only_by_the_app_and_the_run_sse_fast_lane():
    assert importers_of("api", "api.routes") <= {"api.app", "api.streams"}
