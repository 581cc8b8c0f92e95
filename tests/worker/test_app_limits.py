"""worker.queues.app_limits: the process's and each app's cap on invocations in flight, the lines of jobs waiting for a
slot, and AGENTQ_APP_CONCURRENCY (pure logic; tests/worker/test_fairness.py runs it in real workers)."""

from __future__ import annotations

import pytest

from runtime.errors import UsageError
from worker.queues.app_limits import LINE_LIMIT, AppLimits, app_caps_from_env, require_loop_handoff


def job(invocation_id: str, app: str) -> tuple[str, list[str]]:
    return invocation_id, [app, "ann", f"s-{invocation_id}"]


def test_an_app_at_its_cap_waits_while_another_app_still_begins():
    limits = AppLimits(10, {"bulk": 2})
    assert [limits.offer(*job(f"b{i}", "bulk")) for i in range(4)] == [True, True, False, False]
    assert limits.offer(*job("q1", "quick")) is True
    assert (limits.running("bulk"), limits.waiting("bulk"), limits.running("quick")) == (2, 2, 1)


def test_a_freed_slot_goes_to_the_next_waiting_job_of_that_app_in_arrival_order():
    limits = AppLimits(10, {"bulk": 1})
    limits.offer(*job("b1", "bulk"))
    limits.offer(*job("b2", "bulk"))
    limits.offer(*job("b3", "bulk"))
    assert limits.finished("bulk") == [job("b2", "bulk")]
    assert limits.finished("bulk") == [job("b3", "bulk")]
    assert limits.finished("bulk") == []
    assert (limits.running("bulk"), limits.waiting("bulk")) == (0, 0)


def test_when_the_process_is_full_the_apps_with_waiting_jobs_take_turns_for_freed_slots():
    limits = AppLimits(2)
    assert [limits.offer(*job(i, "bulk")) for i in ("b1", "b2", "b3", "b4")] == [True, True, False, False]
    assert limits.offer(*job("q1", "quick")) is False  # the process is full: it waits too
    assert limits.finished("bulk") == [job("b3", "bulk")]
    assert limits.finished("bulk") == [job("q1", "quick")]  # quick's turn, although bulk waited longer
    assert limits.finished("bulk") == [job("b4", "bulk")]


def test_a_second_job_for_an_invocation_already_waiting_is_dropped():
    limits = AppLimits(10, {"bulk": 1})
    limits.offer(*job("b1", "bulk"))
    assert limits.offer(*job("b2", "bulk")) is False
    assert limits.offer(*job("b2", "bulk")) is False  # the watchdog's re-send of a job still waiting
    assert limits.waiting("bulk") == 1


def test_jobs_of_no_known_app_are_held_only_by_the_process_cap():
    limits = AppLimits(2, {"bulk": 1})
    assert [limits.offer("e-1", None), limits.offer("e-2", None), limits.offer("e-3", None)] == [True, True, False]
    assert limits.finished(None) == [("e-3", None)]


def test_a_line_is_full_at_its_limit_and_drained_at_half_of_it():
    limits = AppLimits(100, {"bulk": 1, "wide": 50})
    assert (limits.line_limit("bulk"), limits.line_limit("wide"), limits.line_limit(None)) == (1, LINE_LIMIT, LINE_LIMIT)
    for i in range(LINE_LIMIT + 1):
        limits.offer(*job(f"w{i}", "wide"))  # 50 may run: none waits
    limits.offer(*job("b1", "bulk"))
    assert limits.line_full(["bulk"]) is False
    limits.offer(*job("b2", "bulk"))
    assert (limits.line_full(["bulk"]), limits.line_full(["wide"]), limits.lines_drained(["bulk"])) == (True, False, False)
    limits.finished("bulk")
    assert (limits.line_full(["bulk", "wide"]), limits.lines_drained(["bulk", "wide"])) == (False, True)


def test_a_cap_above_the_process_cap_is_the_process_cap():
    assert AppLimits(4, {"bulk": 100}).cap("bulk") == 4


def test_app_concurrency_is_read_as_app_equals_count_pairs():
    assert app_caps_from_env({"AGENTQ_APP_CONCURRENCY": "reports=50, weather=200"}) == {"reports": 50, "weather": 200}
    assert app_caps_from_env({}) == {}


@pytest.mark.parametrize(("raw", "message"), [
    ("reports=0", "AGENTQ_APP_CONCURRENCY entry for app 'reports' must be a whole number of invocations, at least 1; "
                  "got '0'"),
    ("reports=many", "AGENTQ_APP_CONCURRENCY entry for app 'reports' must be a whole number of invocations, at least "
                     "1; got 'many'"),
    ("reports", "AGENTQ_APP_CONCURRENCY must be app=value pairs separated by commas, such as reports=50,weather=200; "
                "got 'reports'"),
])
def test_a_bad_app_concurrency_is_refused_naming_the_entry(raw, message):
    with pytest.raises(UsageError) as caught:
        app_caps_from_env({"AGENTQ_APP_CONCURRENCY": raw})
    assert str(caught.value) == message


def test_per_app_caps_are_refused_with_the_claim_handoff():
    require_loop_handoff({"reports": 5}, "loop")
    require_loop_handoff({}, "claim")
    with pytest.raises(UsageError) as caught:
        require_loop_handoff({"reports": 5}, "claim")
    assert str(caught.value) == ("AGENTQ_APP_CONCURRENCY (reports) needs --handoff loop (AGENTQ_HANDOFF=loop): with "
                                 "claim, a run job of an app at its cap would hold up every other app's jobs")


def test_taking_the_waiting_jobs_empties_the_lines_and_keeps_the_running_count():
    limits = AppLimits(1)
    limits.offer(*job("b1", "bulk"))
    limits.offer(*job("b2", "bulk"))
    limits.offer(*job("q1", "quick"))
    assert limits.take_waiting() == [job("b2", "bulk"), job("q1", "quick")]
    assert (limits.waiting("bulk"), limits.waiting("quick"), limits.running("bulk")) == (0, 0, 1)
    assert limits.finished("bulk") == []
