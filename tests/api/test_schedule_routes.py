"""Schedule routes over real Redis, no worker or scheduler: made, listed, changed, paused, resumed, triggered,
deleted; bad specs refused with nothing stored; a key reaches only its own users' schedules."""

from __future__ import annotations

import pytest

from api import ApiSettings, create_app
from api.access.auth import parse_keys
from api.services import redis_services

from .conftest import make_client

ALICE, BOB = "alice-key-0001", "bob-key-000002"
KEYS = {ALICE: {"users": ["alice"], "apps": ["weather"]}, BOB: {"users": ["bob"], "apps": ["*"]}}
ALICES = "/apps/weather/users/alice/schedules"


@pytest.fixture
async def app(redis_url):
    backed = redis_services(redis_url)
    settings = ApiSettings(app_names=["weather", "reimbursement"], keys=parse_keys(KEYS))
    yield create_app(settings, backed.services, stats_provider=backed.stats_provider)
    await backed.aclose()


async def stored_schedule_keys(redis_url) -> list[str]:
    import redis.asyncio as aioredis

    async with aioredis.Redis.from_url(redis_url, decode_responses=True) as client:
        return sorted(await client.keys("agentq:*sch*"))


async def test_a_schedule_goes_through_its_whole_life_over_http(app):
    async with make_client(app, key=ALICE) as http:
        made = await http.post(ALICES, json={"id": "morning", "cron": "0 7 * * *", "timezone": "Europe/Paris",
                                             "newMessage": "Weather in Paris today?", "jitterS": 30})
        assert made.status_code == 201, made.text
        body = made.json()
        assert {k: body[k] for k in ("id", "appName", "userId", "paused", "ended", "runs", "missed", "revision")} == {
            "id": "morning", "appName": "weather", "userId": "alice", "paused": False, "ended": False, "runs": 0,
            "missed": 0, "revision": 1}
        assert body["spec"] == {"cron": "0 7 * * *", "intervalS": None, "timezone": "Europe/Paris", "jitterS": 30.0,
                                "startAt": None, "endAt": None, "missed": "latest",
                                "newMessage": "Weather in Paris today?", "stateDelta": None, "sessionId": None,
                                "runConfig": None}
        assert (await http.get(ALICES)).json() == {"schedules": [body], "nextPageToken": None}
        paused = (await http.post(f"{ALICES}/morning/pause")).json()
        assert (paused["paused"], paused["nextRunAt"]) == (True, None)
        triggered = await http.post(f"{ALICES}/morning/trigger")
        assert triggered.status_code == 202
        invocation_id = triggered.json()["invocationId"]
        runs = (await http.get(f"{ALICES}/morning/runs")).json()["runs"]
        assert [(r["invocationId"], r["scheduleId"], r["sessionId"].startswith("morning-")) for r in runs] == [
            (invocation_id, "morning", True)]
        assert (await http.get(f"/invocations/{invocation_id}")).json()["status"] == "queued"
        resumed = (await http.post(f"{ALICES}/morning/resume")).json()
        assert (resumed["paused"], resumed["nextRunAt"] > 0, resumed["runs"]) == (False, True, 1)
        changed = await http.patch(f"{ALICES}/morning", json={"cron": None, "intervalS": 3600})
        assert changed.status_code == 200, changed.text
        assert (changed.json()["spec"].get("cron"), changed.json()["spec"]["intervalS"]) == (None, 3600.0)
        assert (await http.delete(f"{ALICES}/morning")).status_code == 204
        gone = await http.get(f"{ALICES}/morning")
    assert (gone.status_code, gone.json()) == (404, {
        "error": "ScheduleNotFoundError", "detail": "schedule 'morning' of user 'alice' in app 'weather' does not exist"})


@pytest.mark.parametrize(("spec", "status", "detail"), [
    ({"cron": "every day", "newMessage": "x"}, 422, "bad cron expression 'every day'"),
    ({"cron": "0 7 * * *", "timezone": "Paris", "newMessage": "x"}, 422, "unknown timezone 'Paris'"),
    ({"intervalS": 0.1, "newMessage": "x"}, 422, "intervalS 0.1 is below the minimum of 1.0 s"),
    ({"intervalS": 60, "startAt": 2e9, "endAt": 1e9, "newMessage": "x"}, 422, "is not after startAt"),
    ({"intervalS": 60, "newMessage": {"parts": []}}, 400, "new_message must be a Content with at least one part"),
])
async def test_a_bad_schedule_is_a_clear_4xx_and_stores_nothing(app, redis_url, spec, status, detail):
    async with make_client(app, key=ALICE) as http:
        refused = await http.post(ALICES, json=spec)
    assert refused.status_code == status and detail in refused.text
    assert await stored_schedule_keys(redis_url) == []


async def test_a_bad_change_is_refused_and_the_schedule_stays_as_it_was(app):
    async with make_client(app, key=ALICE) as http:
        made = (await http.post(ALICES, json={"id": "s", "intervalS": 60, "newMessage": "x"})).json()
        refused = await http.patch(f"{ALICES}/s", json={"endAt": 1, "startAt": 2})
        after = (await http.get(f"{ALICES}/s")).json()
    assert (refused.status_code, refused.json()["detail"]) == (
        400, "bad schedule: endAt 1970-01-01T00:00:01+00:00 is not after startAt 1970-01-01T00:00:02+00:00")
    assert after == made


async def test_an_unknown_app_or_another_users_schedules_are_not_found(app, redis_url):
    async with make_client(app, key=ALICE) as http:
        unknown_app = await http.post("/apps/nope/users/alice/schedules", json={"intervalS": 60, "newMessage": "x"})
        other_user = await http.post("/apps/weather/users/bob/schedules", json={"intervalS": 60, "newMessage": "x"})
    async with make_client(app, key=BOB) as http:
        await http.post("/apps/weather/users/bob/schedules", json={"id": "b", "intervalS": 60, "newMessage": "x"})
    async with make_client(app, key=ALICE) as http:
        peek = await http.get("/apps/weather/users/bob/schedules/b")
        trigger = await http.post("/apps/weather/users/bob/schedules/b/trigger")
    assert (unknown_app.status_code, unknown_app.json()["detail"]) == (404, "app 'nope' is not served here")
    assert [other_user.status_code, peek.status_code, trigger.status_code] == [404, 404, 404]
    assert await stored_schedule_keys(redis_url) == sorted([
        "agentq:{weather/bob}:sch:b", "agentq:{weather/bob}:schedules", "agentq:schedules:due"])
