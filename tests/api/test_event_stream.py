"""EventStreamResponse: frames go out as they come, keepalives fill silences, a leaving client stops the source."""

from __future__ import annotations

import asyncio

import pytest

from api.streams.event_stream import EventStreamResponse
from api.streams.sse import KEEPALIVE


class FakeClient:
    """The ASGI side of one request: records what is sent, and leaves when told to."""

    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.left = asyncio.Event()

    async def receive(self) -> dict:
        await self.left.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict) -> None:
        self.sent.append(message)

    def bodies(self) -> list[bytes]:
        return [m["body"] for m in self.sent if m["type"] == "http.response.body"]


async def _serve(response: EventStreamResponse, client: FakeClient) -> None:
    await response({"type": "http", "asgi": {"spec_version": "2.3"}}, client.receive, client.send)


async def test_frames_pass_through_with_keepalives_in_silences_and_the_stream_ends_with_an_empty_body():
    async def slow():
        yield b"one"
        await asyncio.sleep(0.3)
        yield b"two"

    client = FakeClient()
    await _serve(EventStreamResponse(slow(), keepalive_s=0.05, headers={"X-Invocation-Id": "e-1"}), client)
    start = client.sent[0]
    assert start["status"] == 200
    assert (b"content-type", b"text/event-stream; charset=utf-8") in start["headers"]
    assert (b"x-invocation-id", b"e-1") in start["headers"]
    assert (b"cache-control", b"no-cache") in start["headers"]
    bodies = client.bodies()
    assert bodies[0] == b"one" and bodies[-2:] == [b"two", b""]
    assert set(bodies[1:-2]) == {KEEPALIVE} and len(bodies[1:-2]) >= 3
    assert client.sent[-1]["more_body"] is False


async def test_a_failing_source_raises_out_of_the_response_after_what_it_sent():
    async def broken():
        yield b"one"
        raise RuntimeError("boom")

    client = FakeClient()
    with pytest.raises(RuntimeError, match="boom"):
        await _serve(EventStreamResponse(broken(), keepalive_s=1), client)
    assert client.bodies() == [b"one"]


async def test_a_leaving_client_cancels_the_source_where_it_waits_and_the_response_ends_quietly():
    waiting = asyncio.Event()
    stopped = []

    async def forever():
        yield b"one"
        try:
            waiting.set()
            await asyncio.sleep(3600)  # a blocking stream read with nothing to read
            yield b"never"
        finally:
            stopped.append(True)

    client = FakeClient()
    serving = asyncio.create_task(_serve(EventStreamResponse(forever(), keepalive_s=60), client))
    await waiting.wait()
    client.left.set()
    await asyncio.wait_for(serving, 1)
    assert stopped == [True]
    assert client.bodies() == [b"one"]
    assert not serving.cancelled()


async def test_a_keepalive_that_cannot_be_written_ends_the_stream_as_a_disconnect():
    stopped = []

    async def forever():
        yield b"one"
        try:
            await asyncio.sleep(3600)
            yield b"never"
        finally:
            stopped.append(True)

    class BrokenPipe(FakeClient):
        async def send(self, message: dict) -> None:
            if message.get("body") == KEEPALIVE:
                raise BrokenPipeError("the client went away")
            await super().send(message)

    client = BrokenPipe()
    await asyncio.wait_for(_serve(EventStreamResponse(forever(), keepalive_s=0.05), client), 1)
    assert stopped == [True]
    assert client.bodies() == [b"one"]
