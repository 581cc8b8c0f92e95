"""``agentq demo``: on a fresh machine, start Redis, a worker and the API, and run the reimbursement example.

Over real HTTP: a small claim is paid at once; a large one parks for a manager's approval, is approved, and
resumes under the same invocation id to completion. Every event is printed as it streams.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from api.sse_client import SseFrame, describe, read_frames

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_APPS = ["examples.reimbursement:app", "examples.weather:app"]
CLI = "import sys; from agentq.cli import main; sys.argv[0] = 'agentq'; sys.exit(main())"


class LocalStack:
    """redis-server + ``agentq worker`` processes + an ``agentq api`` process, on free local ports."""

    def __init__(self, data_dir: str | os.PathLike, *, apps: list[str], workers: int = 1,
                 api_keys_json: str | None = None, extra_env: dict[str, str] | None = None):
        from runtime.redis_store.launcher import EmbeddedRedis, free_port

        self.data_dir = Path(data_dir)
        self.apps = apps
        self.redis = EmbeddedRedis(self.data_dir / "redis")
        self.api_port = free_port()
        self.worker_count = workers
        self.api_keys_json = api_keys_json
        self.extra_env = extra_env or {}
        self.api: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []

    @property
    def base_url(self) -> str:
        """Where the API listens."""
        return f"http://127.0.0.1:{self.api_port}"

    def env(self) -> dict[str, str]:
        """The environment of the child processes: the Redis URL, and the project on the import path."""
        env = {k: v for k, v in os.environ.items() if k not in ("AGENTQ_API_KEYS", "AGENTQ_API_KEYS_FILE")}
        paths = [str(ROOT), os.getcwd(), env.get("PYTHONPATH", "")]
        env.update(AGENTQ_REDIS_URL=self.redis.url, PYTHONPATH=os.pathsep.join(p for p in paths if p),
                   PYTHONUNBUFFERED="1", **self.extra_env)
        if self.api_keys_json:
            env["AGENTQ_API_KEYS"] = self.api_keys_json
        return env

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.data_dir / f"{name}.log", "ab")  # noqa: SIM115 - owned by the child's lifetime
        return subprocess.Popen([sys.executable, "-c", CLI, *args], env=self.env(), stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)

    def start_worker(self) -> subprocess.Popen:
        """Start one more ``agentq worker``."""
        args = ["worker"] + [flag for app in self.apps for flag in ("--app", app)]
        worker = self._spawn(f"worker{len(self.workers)}", args)
        self.workers.append(worker)
        return worker

    def start_api(self) -> subprocess.Popen:
        """Start ``agentq api`` and wait until /health answers."""
        args = ["api", "--port", str(self.api_port)] + [flag for app in self.apps for flag in ("--app", app)]
        self.api = self._spawn("api", args)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.api.poll() is not None:
                raise RuntimeError(f"agentq api exited with {self.api.returncode}:\n{self.log_tail('api')}")
            try:
                if httpx.get(self.base_url + "/health", timeout=1).status_code == 200:
                    return self.api
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"agentq api did not become healthy:\n{self.log_tail('api')}")

    def log_tail(self, name: str, chars: int = 3000) -> str:
        """The end of a child's log."""
        path = self.data_dir / f"{name}.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""

    def start(self) -> LocalStack:
        """Start Redis, the workers and the API."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.redis.start()
        for _ in range(self.worker_count):
            self.start_worker()
        self.start_api()
        return self

    @staticmethod
    def stop_process(process: subprocess.Popen | None, *, sig: int = signal.SIGTERM, timeout: float = 15) -> None:
        """Signal one child process and wait for it (SIGKILL after ``timeout``)."""
        if process is None or process.poll() is not None:
            return
        process.send_signal(sig)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def stop(self) -> None:
        """Stop the API, the workers, then Redis."""
        self.stop_process(self.api)
        for worker in self.workers:
            self.stop_process(worker)
        self.redis.stop()

    def __enter__(self) -> LocalStack:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc_info) -> None:
        self.stop()


async def follow(http: httpx.AsyncClient, invocation_id: str, after: str | None = None) -> list[SseFrame]:
    """Print an invocation's frames as they stream; return them once it settles."""
    headers = {"Last-Event-ID": after} if after else {}
    frames = []
    async with http.stream("GET", f"/invocations/{invocation_id}/events", headers=headers) as response:
        response.raise_for_status()
        async for frame in read_frames(response):
            print("   ", describe(frame), flush=True)
            frames.append(frame)
    return frames


async def claim(http: httpx.AsyncClient, session_id: str, text: str) -> tuple[str, list[SseFrame]]:
    """Enqueue one reimbursement request and follow it until it settles."""
    print(f"\n>>> user: {text}", flush=True)
    message = {"role": "user", "parts": [{"text": text}]}
    response = await http.post(f"/apps/reimbursement/users/demo-user/sessions/{session_id}/invocations",
                               json={"newMessage": message})
    response.raise_for_status()
    invocation_id = response.json()["invocationId"]
    print(f"    enqueued {invocation_id} (202)", flush=True)
    return invocation_id, await follow(http, invocation_id)


async def drive(base_url: str) -> int:
    """The approval flow over HTTP; returns 0 when every step ended as expected."""
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as http:
        session = (await http.post("/apps/reimbursement/users/demo-user/sessions")).json()
        print(f"session {session['id']} created", flush=True)

        small_id, frames = await claim(http, session["id"], "Please reimburse $45 for team lunch.")
        small = (await http.get(f"/invocations/{small_id}")).json()
        print(f"    -> {small_id} is {small['status']}", flush=True)

        large_id, frames = await claim(http, session["id"], "Please reimburse $1200 for a conference trip.")
        parked = (await http.get(f"/invocations/{large_id}")).json()
        inbox = (await http.get("/apps/reimbursement/users/demo-user/invocations", params={"status": "parked"})).json()
        print(f"    -> {large_id} is {parked['status']}; approval inbox holds "
              f"{[item['invocationId'] for item in inbox['invocations']]}", flush=True)
        if parked["status"] != "parked" or not parked["pendingCalls"]:
            print("!!! the large claim did not park for approval", flush=True)
            return 1
        pending = parked["pendingCalls"][0]
        print(f"\n>>> manager approves call {pending['id']} ({pending['name']} {pending['args']})", flush=True)
        answer = {"functionResponses": [{"id": pending["id"], "name": pending["name"],
                                         "response": {"status": "approved", "approver": "demo-manager"}}]}
        accepted = await http.post(f"/invocations/{large_id}/function-responses", json=answer)
        print(f"    {accepted.status_code}: {large_id} accepted the response ({accepted.json()['status']})",
              flush=True)
        await follow(http, large_id, after=frames[-1].id)
        final = (await http.get(f"/invocations/{large_id}")).json()
        print(f"    -> {large_id} is {final['status']} (same invocation id, resumed)", flush=True)
        ok = small["status"] == "completed" and final["status"] == "completed"
        print("\ndemo " + ("finished: small claim paid, large claim approved and paid" if ok else "FAILED"))
        return 0 if ok else 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``agentq demo`` flags."""
    parser.add_argument("--keep", action="store_true", help="keep the demo's data directory")


def run(args: argparse.Namespace) -> int:
    """Start everything, run the approval flow, stop everything."""
    sys.path.insert(0, str(ROOT))
    import logging

    from examples.model_choice import gemini_configured

    logging.getLogger("httpx").setLevel(logging.WARNING)  # the demo prints its own line per request

    print("agentq demo: human approval flow over HTTP (embedded redis-server, one worker, the API)")
    print("model: Gemini (GOOGLE_API_KEY is set)" if gemini_configured()
          else "model: offline ScriptedLlm (set GOOGLE_API_KEY to use Gemini)")
    data_dir = tempfile.mkdtemp(prefix="agentq-demo-")
    stack = LocalStack(data_dir, apps=EXAMPLE_APPS)
    try:
        with stack:
            print(f"redis {stack.redis.url}, api {stack.base_url}, logs in {data_dir}")
            return asyncio.run(drive(stack.base_url))
    except Exception as exc:
        print(f"demo failed: {exc}\n--- worker log ---\n{stack.log_tail('worker0')}\n--- api log ---\n"
              f"{stack.log_tail('api')}", file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            import shutil

            shutil.rmtree(data_dir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """Run ``agentq demo`` directly (``python -m agentq.demo``)."""
    parser = argparse.ArgumentParser(prog="agentq demo", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
