"""Schedule specs and their ticks: pure logic (no Redis). What is refused, and when ticks fall."""

from __future__ import annotations

import datetime as dt

import pytest

from runtime.errors import UsageError
from worker.schedules.spec import ScheduleSpec
from worker.schedules.ticks import Step, next_tick, step


def spec(**fields) -> ScheduleSpec:
    return ScheduleSpec.parse({"newMessage": "hi", **fields})


def ms(year, month, day, hour=0, minute=0, second=0, zone="UTC") -> int:
    from zoneinfo import ZoneInfo

    return round(dt.datetime(year, month, day, hour, minute, second, tzinfo=ZoneInfo(zone)).timestamp() * 1000)


@pytest.mark.parametrize(("fields", "message"), [
    ({"cron": "61 * * * *"}, "bad cron expression '61 * * * *'"),
    ({"cron": "* * * * *", "timezone": "Mars/Olympus"}, "unknown timezone 'Mars/Olympus'"),
    ({"intervalS": 0.5}, "intervalS 0.5 is below the minimum of 1.0 s"),
    ({"intervalS": 5, "startAt": 2000, "endAt": 1000}, "endAt 1970-01-01T00:16:40+00:00 is not after startAt"),
    ({}, "give exactly one of cron and intervalS"),
    ({"cron": "* * * * *", "intervalS": 5}, "give exactly one of cron and intervalS"),
    ({"intervalS": 5, "jitterS": -1}, "jitterS -1.0 must be between 0 and 3600 seconds"),
    ({"intervalS": 5, "missed": "some"}, "missed: Input should be 'latest', 'all' or 'skip'"),
    ({"intervalS": 5, "colour": "red"}, "colour: Extra inputs are not permitted"),
])
def test_a_bad_spec_is_refused_with_a_message_naming_what_is_wrong(fields, message):
    with pytest.raises(UsageError) as refused:
        spec(**fields)
    assert message in str(refused.value)


def test_interval_ticks_count_from_the_start_and_stop_at_the_end():
    every_10s = spec(intervalS=10, startAt=100, endAt=130)
    assert [next_tick(every_10s, after, anchor_ms=0) for after in (0, 100_000, 105_000, 129_999, 130_000)] == [
        100_000, 110_000, 110_000, 130_000, None]


def test_without_a_start_an_interval_counts_from_its_anchor():
    assert next_tick(spec(intervalS=2), 5_000, anchor_ms=5_000) == 7_000
    assert next_tick(spec(intervalS=2), 7_500, anchor_ms=5_000) == 9_000


def test_cron_fields_are_read_in_the_schedules_timezone_across_a_dst_change():
    seven_in_paris = spec(cron="0 7 * * *", timezone="Europe/Paris")
    # The last Sunday of March 2026 moves Paris from UTC+1 to UTC+2: 07:00 local is 06:00Z, then 05:00Z.
    before = next_tick(seven_in_paris, ms(2026, 3, 28, 12), anchor_ms=0)
    after = next_tick(seven_in_paris, before, anchor_ms=0)
    assert (before, after) == (ms(2026, 3, 29, 7, zone="Europe/Paris"), ms(2026, 3, 30, 7, zone="Europe/Paris"))
    assert (before, after) == (ms(2026, 3, 29, 5), ms(2026, 3, 30, 5))


def test_six_cron_fields_have_seconds_first():
    assert next_tick(spec(cron="*/15 * * * * *"), ms(2026, 1, 1, 0, 0, 1), anchor_ms=0) == ms(2026, 1, 1, 0, 0, 15)


def test_a_late_tick_not_yet_overtaken_runs_under_every_policy():
    for policy in ("latest", "all", "skip"):
        assert step(spec(intervalS=10, missed=policy), 10_000, now_ms=19_000, anchor_ms=0) == Step(
            fire=10_000, missed=0, next=20_000)


def test_overtaken_ticks_run_by_the_policy():
    due, now = 10_000, 45_000  # ticks 10, 20, 30 and 40 s are all due
    assert step(spec(intervalS=10, missed="latest"), due, now, 0) == Step(fire=40_000, missed=3, next=50_000)
    assert step(spec(intervalS=10, missed="all"), due, now, 0) == Step(fire=10_000, missed=0, next=20_000)
    assert step(spec(intervalS=10, missed="skip"), due, now, 0) == Step(fire=None, missed=4, next=50_000)


def test_the_jitter_allowance_keeps_a_jittered_tick_from_counting_as_overtaken():
    assert step(spec(intervalS=10, jitterS=5), 10_000, now_ms=23_000, anchor_ms=0) == Step(
        fire=10_000, missed=0, next=20_000)


def test_a_change_is_checked_as_a_whole_and_accepts_snake_case():
    every_5s = spec(intervalS=5)
    assert every_5s.changed({"interval_s": None, "cron": "0 * * * *"}).cron == "0 * * * *"
    with pytest.raises(UsageError, match="give exactly one of cron and intervalS"):
        every_5s.changed({"cron": "0 * * * *"})
