"""An App's plugins run in real ``agentq worker`` processes (tests.worker.apps:plugged_app)."""

from __future__ import annotations

from tests.runtime.helpers import summary


async def test_an_apps_plugins_run_in_the_worker_from_the_user_message_to_every_event(workers, client, user):
    session = await client.create_session("plugged", user)
    invocation_id = await client.enqueue("plugged", user, session.id, "paris")
    record = await client.wait(invocation_id, timeout=30)
    assert (record.status, record.error) == ("completed", None)

    session = await client.session_service.get_session(app_name="plugged", user_id=user, session_id=session.id)
    # the Runner commits the user's message, so the plugin saw it (and shouted it) before the commit
    assert [(summary(e), e.custom_metadata) for e in session.events] == [
        (("user", ["PARIS"]), None),
        (("plugged", [("call", "get_weather", {"city": "PARIS"})]), {"stamped_by": "wp"}),
        (("plugged", [("response", "get_weather", {"answered_by": "wp"})]), {"stamped_by": "wp"}),
        (("plugged", ["tool said {'answered_by': 'wp'}"]), {"stamped_by": "wp"}),
    ]
