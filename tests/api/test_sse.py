"""SSE framing: entry ids, status frames, resume ids, and the reader used by the demo and tests."""

from __future__ import annotations

import httpx
import pytest

from api.streams.sse import check_entry_id, entry_before, entry_frame, entry_json, frame
from api.streams.sse_client import SseFrame, read_frames
from runtime.errors import UsageError
from runtime.redis_store.streams import StreamEntry


def test_an_event_entry_is_a_default_frame_with_its_id():
    entry = StreamEntry(id="17-0", kind="event", invocation_id="e-1", data={"author": "a", "id": "x"})
    assert entry_frame(entry) == b'id: 17-0\ndata: {"author":"a","id":"x"}\n\n'


def test_a_status_entry_is_an_event_status_frame_naming_its_invocation():
    entry = StreamEntry(id="18-1", kind="status", invocation_id="e-1", data={"status": "parked", "detail": {}})
    assert entry_frame(entry) == (
        b'id: 18-1\nevent: status\ndata: {"status":"parked","detail":{},"invocationId":"e-1"}\n\n'
    )


def test_multiline_json_text_is_reencoded_on_one_data_line():
    assert frame(entry_json('{"a":\n 1}'), event="x") == b'event: x\ndata: {"a":1}\n\n'


@pytest.mark.parametrize(
    ("entry_id", "before"),
    [("17-3", "17-2"), ("17-0", "16-18446744073709551615"), ("0-0", "0-0")],
)
def test_the_id_before_an_entry_is_the_previous_sequence_or_millisecond(entry_id, before):
    assert entry_before(entry_id) == before


@pytest.mark.parametrize("value", ["", None, "  "])
def test_an_empty_resume_id_means_from_the_start(value):
    assert check_entry_id(value) is None


def test_a_malformed_resume_id_is_refused_naming_it():
    with pytest.raises(UsageError) as caught:
        check_entry_id("0-0; DROP")
    assert str(caught.value) == "Last-Event-ID '0-0; DROP' is not a stream entry id like '1700000000000-0'"


async def test_the_reader_parses_frames_and_skips_comments():
    body = b': keepalive\n\nid: 1-0\ndata: {"a": 1}\n\nid: 2-0\nevent: status\ndata: {"status": "completed"}\n\n'
    response = httpx.Response(200, content=body)
    frames = [f async for f in read_frames(response)]
    assert frames == [
        SseFrame(id="1-0", event="message", data={"a": 1}),
        SseFrame(id="2-0", event="status", data={"status": "completed"}),
    ]
