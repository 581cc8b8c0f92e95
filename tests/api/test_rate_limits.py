"""Rate limits and in-flight quotas per principal and per app/user: 429 with Retry-After, kept in Redis so two
API processes share them, and one client's burst leaves everyone else's requests alone. Real Redis; each API
in-process with its own connections and its own RateLimits (as two processes would have)."""

from __future__ import annotations

import pytest

from api import ApiSettings, create_app
from api.access.auth import parse_keys
from api.access.rate_limits import RateLimits
from api.services import redis_services
from runtime.errors import UsageError
from tests.api.conftest import make_client

NOISY, QUIET = "noisy-key-0001", "quiet-key-0001"
GRANTS = {NOISY: {"users": ["*"], "apps": ["*"]}, QUIET: {"users": ["*"], "apps": ["*"]}}
MESSAGE = {"newMessage": {"parts": [{"text": "hi"}]}}


def test_limits_are_off_by_default_and_read_from_the_environment_refusing_nonsense():
    assert not ApiSettings().rate_limits.enabled
    limits = RateLimits.from_env({"AGENTQ_RATE_PRINCIPAL_PER_S": "5", "AGENTQ_RATE_PRINCIPAL_BURST": "20",
                                  "AGENTQ_RATE_USER_INFLIGHT": "10"})
    assert (limits.principal_rate, limits.principal_burst, limits.user_inflight, limits.enabled) == (
        5.0, 20.0, 10, True)
    for variable, value in (("AGENTQ_RATE_USER_PER_S", "-1"), ("AGENTQ_RATE_PRINCIPAL_INFLIGHT", "lots"),
                            ("AGENTQ_RATE_PRINCIPAL_PER_S", "inf")):
        with pytest.raises(UsageError, match=variable):
            RateLimits.from_env({variable: value})


class Api:
    """One API 'process': its own Redis connections and its own RateLimits over the shared Redis."""

    def __init__(self, redis_url: str, limits: RateLimits):
        self.backed = redis_services(redis_url)
        self.limits = limits
        self.app = create_app(ApiSettings(app_names=["weather"], keys=parse_keys(GRANTS), rate_limits=limits),
                              self.backed.services)

    async def aclose(self) -> None:
        await self.limits.aclose()
        await self.backed.aclose()


async def _session(http, user: str) -> str:
    response = await http.post(f"/apps/weather/users/{user}/sessions", json={})
    assert response.status_code == 200, response.text
    return response.json()["id"]


async def test_a_burst_from_one_principal_gets_429_with_retry_after_while_another_principal_still_succeeds(
        redis_url):
    limits = dict(principal_rate=0.2, principal_burst=4)
    first, second = Api(redis_url, RateLimits(**limits)), Api(redis_url, RateLimits(**limits))
    async with make_client(first.app, key=NOISY) as noisy_1, make_client(second.app, key=NOISY) as noisy_2, \
            make_client(second.app, key=QUIET) as quiet:
        session = await _session(noisy_1, "ann")
        path = f"/apps/weather/users/ann/sessions/{session}/invocations"
        # the burst is shared across the two API processes: 4 tokens in all, not 4 each
        codes = [(await http.post(path, json=MESSAGE)).status_code for http in (noisy_1, noisy_2) * 3]
        assert codes == [202, 202, 202, 202, 429, 429]
        refused = await noisy_1.post(path, json=MESSAGE)
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["retry-after"]) <= 5
        detail = refused.json()["detail"]
        assert "enqueue rate limit of principal 'key:" in detail and "AGENTQ_RATE_PRINCIPAL_PER_S" in detail
        # another principal, on the same user and session, is not slowed by the noisy one
        assert [(await quiet.post(path, json=MESSAGE)).status_code for _ in range(4)] == [202] * 4
        # POST /run starts an invocation too: the same bucket refuses it before anything is enqueued
        run = await noisy_2.post("/run", json={"appName": "weather", "userId": "ann", "sessionId": session,
                                              "newMessage": {"role": "user", "parts": [{"text": "hi"}]}})
        assert (run.status_code, "retry-after" in run.headers) == (429, True)
        listed = (await quiet.get("/apps/weather/users/ann/invocations")).json()["invocations"]
        assert len(listed) == 8  # 4 noisy + 4 quiet: nothing was stored for a refused request
    await first.aclose()
    await second.aclose()


async def test_invocations_in_flight_are_capped_per_app_user_and_a_settled_one_frees_its_place(redis_url):
    api = Api(redis_url, RateLimits(user_inflight=2))
    async with make_client(api.app, key=NOISY) as http:
        ann, bob = await _session(http, "ann"), await _session(http, "bob")
        ann_path = f"/apps/weather/users/ann/sessions/{ann}/invocations"
        started = [(await http.post(ann_path, json=MESSAGE)) for _ in range(2)]
        assert [r.status_code for r in started] == [202, 202]
        full = await http.post(ann_path, json=MESSAGE)
        assert (full.status_code, full.headers["retry-after"]) == (429, "1")
        assert "app/user 'weather/ann' has 2 invocations in flight, the limit is 2" in full.json()["detail"]
        assert "AGENTQ_RATE_USER_INFLIGHT" in full.json()["detail"]
        bob_path = f"/apps/weather/users/bob/sessions/{bob}/invocations"
        assert (await http.post(bob_path, json=MESSAGE)).status_code == 202  # another user is not held back
        cancelled = await http.post(f"/invocations/{started[0].json()['invocationId']}/cancel", json={})
        assert cancelled.status_code == 200, cancelled.text
        assert (await http.post(ann_path, json=MESSAGE)).status_code == 202  # the settled one left the count
        assert (await http.post(ann_path, json=MESSAGE)).status_code == 429
    await api.aclose()


def test_two_real_api_processes_share_one_principal_bucket_and_another_principal_is_unaffected(
        redis_url, tmp_path):
    import json
    import os
    import subprocess
    import sys
    import time

    import httpx

    from agentq.local_stack import CLI, ROOT
    from runtime.redis_store.launcher import free_port

    env = {**os.environ, "AGENTQ_REDIS_URL": redis_url, "PYTHONPATH": str(ROOT), "AGENTQ_API_KEYS": json.dumps(GRANTS),
           "AGENTQ_RATE_PRINCIPAL_PER_S": "0.1", "AGENTQ_RATE_PRINCIPAL_BURST": "3"}
    ports = [free_port(), free_port()]
    processes = [subprocess.Popen([sys.executable, "-c", CLI, "api", "--port", str(port), "--app", "weather"],
                                  env=env, cwd=tmp_path, stdout=open(tmp_path / f"api{port}.log", "wb"),  # noqa: SIM115
                                  stderr=subprocess.STDOUT) for port in ports]
    try:
        urls = [f"http://127.0.0.1:{port}" for port in ports]
        deadline = time.monotonic() + 60
        for url in urls:
            while True:
                assert time.monotonic() < deadline, (tmp_path / f"api{url[-5:]}.log").read_text()[-2000:]
                try:
                    if httpx.get(url + "/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)

        def post(url: str, key: str, path: str, body: dict) -> httpx.Response:
            return httpx.post(url + path, json=body, headers={"Authorization": f"Bearer {key}"}, timeout=10)

        session = post(urls[0], NOISY, "/apps/weather/users/ann/sessions", {}).json()["id"]
        path = f"/apps/weather/users/ann/sessions/{session}/invocations"
        codes = [post(urls[i % 2], NOISY, path, MESSAGE).status_code for i in range(5)]
        assert codes == [202, 202, 202, 429, 429]  # 3 tokens across both processes, not 3 each
        assert [post(url, QUIET, path, MESSAGE).status_code for url in urls] == [202, 202]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)
