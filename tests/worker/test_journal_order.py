"""The invariant behind exactly-once tools: the tool journal and the session's commits share one pipelined
connection, so the journal's 'completed' record, queued without waiting, reaches Redis before the commit of the
tool's response event queued after it (worker.running.journal, worker.records.store.session_service)."""

from __future__ import annotations

from worker.records.store import InvocationStore
from worker.running.journal import RedisToolJournal


async def test_the_tool_journal_and_the_session_commits_go_out_on_one_connection(redis_url):
    store = InvocationStore(redis_url)
    journal = RedisToolJournal(store)
    try:
        commits = store.session_service._clients
        assert journal._clients is commits is store.clients
        assert journal._clients.mux() is commits.mux()  # the very connection, on this loop
    finally:
        await store.aclose()
