"""SSE framing: entry ids, status frames, keepalives, resume ids, and the reader used by the demo and tests."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from api.sse import KEEPALIVE, check_entry_id, entry_frame, entry_json, frame, with_keepalive
from api.sse_client import SseFrame, read_frames
from runtime.errors import UsageError
from runtime.redis_store.streams import StreamEntry


def test_an_event_entry_is_a_default_frame_with_its_id():
    entry = StreamEntry(id="17-0", kind="event", invocation_id="e-1", data={"author": "a", "id": "x"})
    assert entry_frame(entry) == b'id: 17-0\ndata: {"author":"a","id":"x"}\n\n'


def test_a_status_entry_is_an_event_status_frame():
    entry = StreamEntry(id="18-1", kind="status", invocation_id="e-1", data={"status": "parked", "detail": {}})
    assert entry_frame(entry) == b'id: 18-1\nevent: status\ndata: {"status":"parked","detail":{}}\n\n'


def test_multiline_json_text_is_reencoded_on_one_data_line():
    assert frame(entry_json('{"a":\n 1}'), event="x") == b'event: x\ndata: {"a":1}\n\n'


@pytest.mark.parametrize("value", ["", None, "  "])
def test_an_empty_resume_id_means_from_the_start(value):
    assert check_entry_id(value) is None


def test_a_malformed_resume_id_is_refused_naming_it():
    with pytest.raises(UsageError) as caught:
        check_entry_id("0-0; DROP")
    assert str(caught.value) == "Last-Event-ID '0-0; DROP' is not a stream entry id like '1700000000000-0'"


async def test_keepalive_comments_fill_silences_and_the_source_is_passed_through():
    async def slow():
        yield b"one"
        await asyncio.sleep(0.3)
        yield b"two"

    out = [item async for item in with_keepalive(slow(), 0.05)]
    assert out[0] == b"one" and out[-1] == b"two"
    assert set(out[1:-1]) == {KEEPALIVE}


async def test_a_failing_source_raises_in_the_consumer():
    async def broken():
        yield b"one"
        raise RuntimeError("boom")

    out = []
    with pytest.raises(RuntimeError, match="boom"):
        async for item in with_keepalive(broken(), 1):
            out.append(item)
    assert out == [b"one"]


async def test_the_reader_parses_frames_and_skips_comments():
    body = b': keepalive\n\nid: 1-0\ndata: {"a": 1}\n\nid: 2-0\nevent: status\ndata: {"status": "completed"}\n\n'
    response = httpx.Response(200, content=body)
    frames = [f async for f in read_frames(response)]
    assert frames == [
        SseFrame(id="1-0", event="message", data={"a": 1}),
        SseFrame(id="2-0", event="status", data={"status": "completed"}),
    ]
