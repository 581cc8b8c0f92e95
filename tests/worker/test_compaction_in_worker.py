"""An App's events compaction runs in real ``agentq worker`` processes (tests.worker.apps:compacting_app)."""

from __future__ import annotations

from tests.runtime.helpers import summary


async def test_the_worker_commits_summaries_to_the_history_and_stream_and_the_model_is_shown_them(
        workers, client, user):
    session = await client.create_session("compacting", user)
    for text in ("m0", "m1", "m2"):
        invocation_id = await client.enqueue("compacting", user, session.id, text)
        record = await client.wait(invocation_id, timeout=30)
        assert (record.status, record.error) == ("completed", None)

    session = await client.session_service.get_session(app_name="compacting", user_id=user, session_id=session.id)
    events = session.events
    assert [summary(e) for e in events] == [
        ("user", ["m0"]), ("compacting", ["user:m0"]),
        ("user", ["m1"]), ("compacting", ["user:m0|model:user:m0|user:m1"]),
        ("user", []),  # the summary of the first two invocations
        ("user", ["m2"]), ("compacting", ["model:summary of 4 lines|user:m2"]),
    ]
    compaction = events[4].actions.compaction
    assert (compaction.start_timestamp, compaction.end_timestamp) == (events[0].timestamp, events[3].timestamp)
    entries = [entry async for entry in client.session_events("compacting", user, session.id, follow=False)]
    assert [entry.data for entry in entries if entry.invocation_id == events[4].invocation_id] == [
        events[4].to_json_dict()]
