"""OAuth credential benchmark: what sealing costs when a tool loads its user's credential.

On an embedded redis-server, in one process: the anchor reads the same credential JSON stored in clear (GET +
pydantic parse); the measured path is ``RedisCredentialService.read_credential`` (GET + Fernet decrypt +
parse), and ``write_credential`` (seal + SET) beside a clear SET. Rounds interleave the paths so drift hits
them alike. Reported: p50 per operation in microseconds, and each sealed path as a ratio of its clear anchor.

Run: ``python -m bench.oauth_bench``; ``run()`` returns the figures; the table goes to stdout.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time

import redis.asyncio as aioredis
from cryptography.fernet import Fernet

from runtime.auth import AuthCredential, AuthCredentialTypes, OAuth2Auth
from runtime.auth.sealing import Sealer
from runtime.redis_store.launcher import EmbeddedRedis
from worker.records.credentials import RedisCredentialService

ROUNDS = 3000


def _credential() -> AuthCredential:
    return AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(
        access_token="at-" + "x" * 40, refresh_token="rt-" + "y" * 40, expires_at=int(time.time()) + 3600,
        expires_in=3600, token_endpoint_auth_method=None))


def _us(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1e6, 1)


async def _measure(url: str) -> dict:
    client = aioredis.Redis.from_url(url, decode_responses=True)
    service = RedisCredentialService(lambda: client, Sealer(Fernet.generate_key().decode()))
    credential = _credential()
    clear = credential.model_dump_json(by_alias=True, exclude_none=True)
    await service.write_credential("bench", "u", "k", credential)
    await client.set("bench:clear", clear)
    times: dict[str, list[float]] = {"clear_get": [], "sealed_load": [], "clear_set": [], "sealed_save": []}
    for _ in range(ROUNDS):
        start = time.perf_counter()
        AuthCredential.model_validate_json(await client.get("bench:clear"))
        times["clear_get"].append(time.perf_counter() - start)
        start = time.perf_counter()
        await service.read_credential("bench", "u", "k")
        times["sealed_load"].append(time.perf_counter() - start)
        start = time.perf_counter()
        await client.set("bench:clear", credential.model_dump_json(by_alias=True, exclude_none=True))
        times["clear_set"].append(time.perf_counter() - start)
        start = time.perf_counter()
        await service.write_credential("bench", "u", "k", credential)
        times["sealed_save"].append(time.perf_counter() - start)
    await client.aclose()
    out = {name: _us(samples) for name, samples in times.items()}
    out["load_vs_clear"] = round(out["sealed_load"] / out["clear_get"], 2)
    out["save_vs_clear"] = round(out["sealed_save"] / out["clear_set"], 2)
    return out


def run() -> dict:
    """The figures (p50 microseconds per operation, and the sealed/clear ratios)."""
    with tempfile.TemporaryDirectory() as data_dir, EmbeddedRedis(f"{data_dir}/redis") as server:
        return asyncio.run(_measure(server.url))


def main() -> None:
    figures = run()
    print(f"credential load, {ROUNDS} rounds (p50 us): clear GET+parse {figures['clear_get']}, "
          f"sealed (GET+decrypt+parse) {figures['sealed_load']} -> {figures['load_vs_clear']}x")
    print(f"credential save (p50 us): clear SET {figures['clear_set']}, sealed (encrypt+SET) "
          f"{figures['sealed_save']} -> {figures['save_vs_clear']}x")


if __name__ == "__main__":
    main()
