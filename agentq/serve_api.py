"""``agentq api``: serve the HTTP API with uvicorn. Settings from flags or AGENTQ_* environment variables."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from runtime.errors import UsageError

log = logging.getLogger("agentq.api")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``agentq api`` flags."""
    env = os.environ.get
    parser.add_argument(
        "--app", action="append", dest="apps", default=None, metavar="MODULE:ATTR|NAME",
        help="an App to serve even before a worker announces it (module:attr is imported for its name and "
        "description; a bare name is used as is). Optional: every app an alive worker announces is served. "
        "Repeatable; default AGENTQ_APPS (comma-separated)",
    )
    parser.add_argument("--host", default=env("AGENTQ_API_HOST", "127.0.0.1"), help="bind address (AGENTQ_API_HOST)")
    parser.add_argument("--port", type=int, default=int(env("AGENTQ_API_PORT", "8000")), help="(AGENTQ_API_PORT)")
    # SUPPRESS: `agentq --redis-url X api` sets these on the main parser; a subparser default would erase them.
    parser.add_argument(
        "--redis-url", default=argparse.SUPPRESS,
        help="Redis URL (AGENTQ_REDIS_URL); none: start an embedded redis-server under --data-dir",
    )
    parser.add_argument("--data-dir", default=argparse.SUPPRESS, help="embedded Redis data, AGENTQ_DATA_DIR (default: ~/.local/share/agentq)")
    parser.add_argument(
        "--api-keys-file", default=env("AGENTQ_API_KEYS_FILE"),
        help="JSON file {key: {users: [...], apps: [...]}} (AGENTQ_API_KEYS_FILE; AGENTQ_API_KEYS holds the same "
        "JSON inline). No keys: only loopback clients are served",
    )
    parser.add_argument(
        "--max-body-bytes", type=int, default=int(env("AGENTQ_MAX_BODY_BYTES", "1000000")),
        help="larger request bodies get 413 (AGENTQ_MAX_BODY_BYTES)",
    )
    parser.add_argument(
        "--dev-ui-dir", default=env("AGENTQ_DEV_UI_DIR"), metavar="PATH",
        help="serve this built web UI at /dev-ui/, e.g. google-adk's dev UI (its google/adk/cli/browser "
        "folder); it sends no key, so use it without API keys (AGENTQ_DEV_UI_DIR)",
    )
    parser.add_argument(
        "--a2a", action="append", dest="a2a_apps", default=None, metavar="NAME",
        help="serve this app (one of --app, given as module:attr) as an A2A agent at /a2a/NAME; repeatable "
        "(AGENTQ_A2A_APPS, comma-separated)",
    )
    parser.add_argument(
        "--a2a-url", default=env("AGENTQ_A2A_URL"),
        help="the public base URL the A2A agent cards name (AGENTQ_A2A_URL; default http://HOST:PORT)",
    )
    parser.add_argument("--log-level", default=argparse.SUPPRESS, help="(AGENTQ_LOG_LEVEL, info)")
    parser.add_argument("--access-log", action="store_true", help="log every request")


def app_names(specs: list[str]) -> list[str]:
    """The app names of ``module:attr`` specs (imported for their ``name``) and bare names (used as is)."""
    return [target if isinstance(target, str) else target.name for target in _app_targets(specs)]


def app_infos(specs: list[str]) -> dict[str, dict]:
    """ADK's AppInfo of each ``module:attr`` app, by name (bare names have no agent tree to describe)."""
    from api.views.app_info import describe_app

    return {target.name: describe_app(target) for target in _app_targets(specs) if not isinstance(target, str)}


def _app_targets(specs: list[str]) -> list:
    """The App objects of ``module:attr`` specs and the bare names, in order."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`, so examples.* resolve from the project root
    targets = []
    for value in specs:
        for spec in (part.strip() for part in value.split(",")):
            if not spec:
                continue
            module_name, sep, attr = spec.partition(":")
            if not sep:
                targets.append(spec)
                continue
            try:
                target = importlib.import_module(module_name)
                for part in attr.split("."):
                    target = getattr(target, part)
            except (ImportError, AttributeError) as exc:
                raise UsageError(f"app {spec!r} cannot be loaded: {exc}") from exc
            targets.append(target)
    return targets


def app_specs(args: argparse.Namespace) -> list[str]:
    """The --app values, else AGENTQ_APPS."""
    return args.apps or [os.environ.get("AGENTQ_APPS", "")]


def build(args: argparse.Namespace, redis_url: str):
    """The ASGI app for ``args`` on ``redis_url``."""
    from api import ApiSettings, create_app
    from api.access.approval_policy import with_declared
    from api.access.auth import parse_public_routes
    from api.access.http_limits import ConnectionLimits
    from api.access.rate_limits import RateLimits
    from api.access.web_edge import EdgeSettings
    from api.services import redis_services
    from api.settings import load_approval_policy, load_keys, load_oidc, parse_cors_origins
    from worker.records.retention import RetentionPolicy
    from worker.webhooks.config import WebhookSettings

    settings = ApiSettings(
        app_names=app_names(app_specs(args)),
        follow_workers=True,
        app_infos=app_infos(app_specs(args)),
        keys=load_keys(keys_json=os.environ.get("AGENTQ_API_KEYS"), keys_file=args.api_keys_file),
        max_body_bytes=args.max_body_bytes,
        dev_ui_dir=getattr(args, "dev_ui_dir", None),
        cors_origins=parse_cors_origins(os.environ.get("AGENTQ_CORS_ORIGINS", "")),
        public_routes=parse_public_routes(os.environ.get("AGENTQ_API_PUBLIC_ROUTES", "health")),
        connection=ConnectionLimits.from_env(),
        rate_limits=RateLimits.from_env(),
        webhook_guard=(webhooks := WebhookSettings.from_env()).guard(),
        oidc=load_oidc(os.environ),
        approval=with_declared(load_approval_policy(os.environ),
                               [app for app in _app_targets(app_specs(args)) if not isinstance(app, str)]),
    )
    retention = getattr(args, "retention", None) or RetentionPolicy.from_env()
    backed = redis_services(redis_url, retention=retention, webhooks=webhooks, apps=settings.app_names)
    app = create_app(
        settings, backed.services, stats_provider=backed.stats_provider, on_shutdown=backed.aclose,
        edge=EdgeSettings.from_env(),
    )
    served_over_a2a = a2a_apps(args, _app_targets(app_specs(args)))
    if served_over_a2a:
        from api.a2a import mount_a2a

        base_url = getattr(args, "a2a_url", None) or f"http://{args.host}:{args.port}"
        mount_a2a(app, settings, backed.services, served_over_a2a, base_url.rstrip("/"))
    return app


def a2a_apps(args: argparse.Namespace, targets: list) -> dict:
    """The root agents of the apps served over A2A, by name (--a2a, else AGENTQ_A2A_APPS). UsageError for a
    name that is not an app given as module:attr."""
    names = [name.strip() for value in (getattr(args, "a2a_apps", None) or [os.environ.get("AGENTQ_A2A_APPS", "")])
             for name in value.split(",") if name.strip()]
    loaded = {target.name: target for target in targets if not isinstance(target, str)}
    missing = [name for name in names if name not in loaded]
    if missing:
        raise UsageError(f"--a2a {', '.join(missing)}: not an app given as module:attr with --app/AGENTQ_APPS "
                         f"(loaded: {sorted(loaded) or 'none'})")
    return {name: getattr(loaded[name], "root_agent", loaded[name]) for name in names}


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted (Ctrl-C or SIGTERM); returns the exit code."""
    from agentq.embedded import ensure_redis
    from worker.config.local_redis import data_dir

    log_level = (getattr(args, "log_level", None) or os.environ.get("AGENTQ_LOG_LEVEL") or "info").lower()
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    local = ensure_redis(
        getattr(args, "redis_url", None) or os.environ.get("AGENTQ_REDIS_URL"),
        getattr(args, "data_dir", None) or data_dir(),
        register="api",
    )
    if local.data is not None:
        log.info("agentq api: no AGENTQ_REDIS_URL, using the embedded redis-server at %s", local.url)
    try:
        from worker.records.migrate import require_layout
        from worker.records.retention import RetentionPolicy

        try:  # the store's layout: refused if newer than this code, migrated first if older
            require_layout(local.url, who="agentq api", retention_s=RetentionPolicy.from_env().settled_s)
        except UsageError as exc:
            log.error("agentq api: %s", exc)
            return 2
        return _serve(args, local.url, log_level)
    except _Stopped:
        return 0
    finally:
        local.release()  # the last agentq process on the embedded redis-server stops it


class _Stopped(Exception):
    """Raised by the signal uvicorn hands back once it has shut down."""


def _stopped(signum, frame) -> None:
    raise _Stopped


def _serve(args: argparse.Namespace, redis_url: str, log_level: str) -> int:
    import signal

    import uvicorn

    from runtime.tracing import otel_setup

    otel_setup.configure_from_env("agentq-api")  # request spans, only when the OTEL_* settings name an endpoint
    try:
        app = build(args, redis_url)
    except UsageError as exc:  # a setting that makes no sense: refused at start, naming it
        log.error("agentq api: %s", exc)
        return 2
    if not app.state.settings.auth_enabled and args.host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("agentq api: bound to %s without API keys: non-loopback clients will get 403", args.host)
    # loop "auto" picks uvloop and http is httptools (both dependencies): ~0.2 ms less per /run_sse and ~10%
    # less API CPU than asyncio's loop and h11's pure-Python parser (bench.api_bench, 2-core machine); its
    # protocol is wrapped to time out slow headers and refuse huge ones (api.http_limits).
    config = uvicorn.Config(
        app, host=args.host, port=args.port, log_level=log_level, access_log=args.access_log,
        lifespan="on", timeout_graceful_shutdown=5, loop="auto", **app.state.settings.connection.uvicorn_options(),
        # Forwarded headers are believed only from AGENTQ_TRUSTED_PROXIES, by api.web_edge: uvicorn's default
        # (trust 127.0.0.1) would make a same-host proxy's clients look like loopback, or their claims true.
        proxy_headers=False, forwarded_allow_ips=None,
    )
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then raises the signal again with the handler it found:
    # SIGTERM's default would end the process before `finally` stops the embedded redis-server.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _stopped)
    print(where_to_go(args.host, args.port), flush=True)
    uvicorn.Server(config).run()
    return 0


def where_to_go(host: str, port: int) -> str:
    """The line ``agentq api`` prints at start: where the approver's page and the API's docs are."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}"
    return f"agentq api: the approver's page is {base}/ui, the HTTP API {base} (its docs: {base}/docs)"


def main(argv: list[str] | None = None) -> int:
    """Run ``agentq api`` directly (``python -m agentq.serve_api``)."""
    parser = argparse.ArgumentParser(prog="agentq api", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
