"""Auth benchmark: what a bearer key or an OIDC token costs per request, against enqueue latency.

Two real stacks (embedded redis-server, one ``agentq api`` each, no worker: enqueued invocations just queue):
one with no auth (loopback only), one with an unnamed key, a named (hashed) key with roles, and OIDC tokens
from a local JWKS file. Rounds interleave the four ways of calling ``POST .../invocations`` over keep-alive
connections, so drift hits them alike. Then, in-process, ``resolve_caller`` plus the route's role check alone:
a key, a token verified from scratch (RS256), and a token seen before (the verifier's cache).

The two stacks are separate processes (and the no-auth one also checks the Host header against DNS
rebinding), so the HTTP columns differ by more than auth: the in-process figures are what auth itself adds,
given as a share of the keyed stack's enqueue p50 (``auth_share_of_enqueue_pct``).

Run: ``python -m bench.auth_bench``; ``run()`` returns the figures; the table goes to stdout.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from agentq.local_stack import LocalStack

APPS = ["examples.weather:app"]
MESSAGE = {"role": "user", "parts": [{"text": "What is the weather in Paris?"}]}
ISSUER, AUDIENCE = "https://idp.bench.test", "agentq-bench"
LEGACY, NAMED = "bench-legacy-key-0001", "bench-named-key-0001"
ROUNDS = 600


def _ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 3)


def _keys_and_jwks(root: Path, signing) -> tuple[str, dict]:
    from api.access.auth import hash_secret

    jwks = root / "jwks.json"
    public = json.loads(RSAAlgorithm.to_jwk(signing.public_key()))
    jwks.write_text(json.dumps({"keys": [{**public, "kid": "bench", "use": "sig", "alg": "RS256"}]}))
    keys = {LEGACY: {"users": ["*"]},
            "bench-bot": {"sha256": hash_secret(NAMED), "users": ["*"], "roles": ["enqueue", "read"]}}
    env = {"AGENTQ_OIDC_ISSUER": ISSUER, "AGENTQ_OIDC_AUDIENCE": AUDIENCE, "AGENTQ_OIDC_JWKS_FILE": str(jwks)}
    return json.dumps(keys), env


def _token(signing) -> str:
    return jwt.encode({"iss": ISSUER, "aud": AUDIENCE, "sub": "bench-user", "exp": int(time.time()) + 3600,
                       "agentq_users": ["*"], "agentq_roles": ["enqueue", "read"]},
                      signing, algorithm="RS256", headers={"kid": "bench"})


async def _enqueue(http: httpx.AsyncClient, session: str) -> float:
    t0 = time.perf_counter()
    response = await http.post(f"/apps/weather/users/bench/sessions/{session}/invocations",
                               json={"newMessage": MESSAGE})
    elapsed = time.perf_counter() - t0
    assert response.status_code == 202, response.text
    return elapsed


async def _http_figures(open_url: str, keyed_url: str, token: str) -> dict[str, dict]:
    clients = {
        "no auth (loopback)": httpx.AsyncClient(base_url=open_url),
        "unnamed key": httpx.AsyncClient(base_url=keyed_url, headers={"Authorization": f"Bearer {LEGACY}"}),
        "named key (hashed, roles)": httpx.AsyncClient(base_url=keyed_url,
                                                       headers={"Authorization": f"Bearer {NAMED}"}),
        "OIDC token": httpx.AsyncClient(base_url=keyed_url, headers={"Authorization": f"Bearer {token}"}),
    }
    samples: dict[str, list[float]] = {name: [] for name in clients}
    try:
        for i, http in enumerate(clients.values()):
            assert (await http.post("/apps/weather/users/bench/sessions", json={"sessionId": f"s{i}"})).is_success
        order = list(enumerate(clients.items()))
        for round_ in range(ROUNDS + 50):
            shift = round_ % len(order)  # each caller takes each place in the round equally often
            for i, (name, http) in order[shift:] + order[:shift]:
                elapsed = await _enqueue(http, f"s{i}")
                if round_ >= 50:  # warm-up
                    samples[name].append(elapsed)
    finally:
        for http in clients.values():
            await http.aclose()
    base = statistics.median(samples["no auth (loopback)"])
    return {name: {"p50_ms": _ms(s, 0.5), "p95_ms": _ms(s, 0.95), "mean_ms": round(statistics.mean(s) * 1000, 3),
                   "vs_no_auth_pct": round((statistics.median(s) / base - 1) * 100, 1)}
            for name, s in samples.items()}


def _in_process_figures(root: Path, signing, token: str) -> dict[str, float]:
    """Microseconds per call of resolve_caller + the role check (what auth adds to any request)."""
    from starlette.requests import Request

    from api.access.auth import parse_keys
    from api.access.oidc import OidcSettings, OidcVerifier
    from api.access.roles import check_route_roles

    keys_json, env = _keys_and_jwks(root, signing)
    keys = parse_keys(json.loads(keys_json))
    route = type("Route", (), {"path": "/apps/{app_name}/users/{user_id}/sessions/{session_id}/invocations"})()
    from api.access.auth import resolve_caller

    def request(bearer: str) -> Request:
        return Request({"type": "http", "method": "POST", "path": "/x", "route": route, "client": ("10.0.0.1", 1),
                        "headers": [(b"authorization", f"Bearer {bearer}".encode())]})

    settings = OidcSettings(issuer=ISSUER, audience=AUDIENCE, jwks_file=env["AGENTQ_OIDC_JWKS_FILE"])

    def per_call(bearer: str, n: int = 3000, *, first_sight: bool = False) -> float:
        verifier = OidcVerifier(settings)
        req = request(bearer)
        elapsed = 0.0
        for _ in range(n):
            if first_sight:  # a token never seen: full RS256 verification each time
                verifier = OidcVerifier(settings)
            t0 = time.perf_counter()
            check_route_roles(resolve_caller(req, keys, verifier), req)
            elapsed += time.perf_counter() - t0
        return round(elapsed / n * 1e6, 2)

    return {"unnamed key": per_call(LEGACY), "named key": per_call(NAMED),
            "OIDC token, first sight (RS256 verify)": per_call(token, 1000, first_sight=True),
            "OIDC token, seen before (cache)": per_call(token)}


def run() -> dict:
    """Both stacks, the interleaved HTTP figures and the in-process cost of auth."""
    signing = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        keys_json, oidc_env = _keys_and_jwks(root, signing)
        token = _token(signing)
        env = {"GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""}
        with LocalStack(root / "open", apps=APPS, workers=0, extra_env=env) as open_stack, \
                LocalStack(root / "keyed", apps=APPS, workers=0, api_keys_json=keys_json,
                           extra_env={**env, **oidc_env}) as keyed_stack:
            http = asyncio.run(_http_figures(open_stack.base_url, keyed_stack.base_url, token))
        in_process = _in_process_figures(root, signing, token)
    enqueue_us = http["unnamed key"]["p50_ms"] * 1000
    share = {name: round(us / enqueue_us * 100, 2) for name, us in in_process.items()}
    return {"enqueue_http": http, "auth_us_per_request": in_process, "auth_share_of_enqueue_pct": share,
            "rounds": ROUNDS}


def main() -> None:
    figures = run()
    (Path(__file__).parent / "results" / "auth.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(f"POST .../invocations (202), {figures['rounds']} interleaved rounds, no worker:")
    print(f"{'caller':28} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8} {'p50 vs no auth':>15}")
    for name, row in figures["enqueue_http"].items():
        print(f"{name:28} {row['p50_ms']:8.3f} {row['p95_ms']:8.3f} {row['mean_ms']:8.3f} {row['vs_no_auth_pct']:14.1f}%")
    print("resolve_caller + role check, in process (us per request):")
    for name, us in figures["auth_us_per_request"].items():
        share = figures["auth_share_of_enqueue_pct"][name]
        print(f"  {name:40} {us:8.2f} us  ({share:.2f}% of the enqueue p50)")


if __name__ == "__main__":
    main()
