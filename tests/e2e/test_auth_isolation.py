"""Auth over real HTTP: a key never reaches another user's sessions, invocations or streams."""

from __future__ import annotations

from .conftest import ALICE_KEY, BOB_KEY, client, user_message


async def test_bob_gets_404_for_everything_of_alice(stack):
    async with client(stack, ALICE_KEY) as alice:
        await alice.post("/apps/weather/users/alice/sessions", json={"sessionId": "private"})
        enqueued = await alice.post(
            "/apps/weather/users/alice/sessions/private/invocations",
            json={"newMessage": user_message("What is the weather in Tokyo?")},
        )
        invocation_id = enqueued.json()["invocationId"]
    async with client(stack, BOB_KEY) as bob:
        answers = {
            "session": await bob.get("/apps/weather/users/alice/sessions/private"),
            "sessions": await bob.get("/apps/weather/users/alice/sessions"),
            "delete": await bob.delete("/apps/weather/users/alice/sessions/private"),
            "invocation": await bob.get(f"/invocations/{invocation_id}"),
            "events": await bob.get(f"/invocations/{invocation_id}/events"),
            "session_events": await bob.get("/apps/weather/users/alice/sessions/private/events"),
            "cancel": await bob.post(f"/invocations/{invocation_id}/cancel"),
            "inbox": await bob.get("/apps/weather/users/alice/invocations"),
            "run": await bob.post("/run", json={"appName": "weather", "userId": "alice", "sessionId": "private",
                                                "newMessage": user_message("hi")}),
        }
    async with client(stack, ALICE_KEY) as alice:
        still_there = await alice.get("/apps/weather/users/alice/sessions/private")
    assert {name: r.status_code for name, r in answers.items()} == {name: 404 for name in answers}
    assert still_there.status_code == 200


async def test_no_key_and_a_wrong_key_get_401(stack):
    async with client(stack, "not-a-configured-key") as stranger:
        wrong = await stranger.get("/list-apps")
    async with client(stack, "") as anonymous:
        anonymous.headers.pop("Authorization")
        missing = await anonymous.get("/list-apps")
    assert (wrong.status_code, missing.status_code) == (401, 401)
