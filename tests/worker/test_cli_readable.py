"""The terminal's readable view (the default; ``--json`` is the wire form): one line per event with its local
time, waits with the command that answers them (pasted into a real shell here), records and lists as tables;
``agentq list --status failed`` across users. Against real workers and a real redis-server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from tests.worker.conftest import ROOT

LOCAL_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d"


def agentq(redis_url: str, *args: str) -> str:
    """``agentq ARGS``'s stdout (the readable view unless ARGS has --json)."""
    result = subprocess.run([sys.executable, "-m", "agentq.cli", *args], cwd=ROOT, capture_output=True, text=True,
                            timeout=60, env={**os.environ, "AGENTQ_REDIS_URL": redis_url, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    return result.stdout


def shell(redis_url: str, line: str) -> str:
    """``line`` run by bash, as a person pasting it would."""
    result = subprocess.run(["bash", "-c", line], cwd=ROOT, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "AGENTQ_REDIS_URL": redis_url, "PYTHONPATH": str(ROOT),
                                 "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"})
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_enqueue_follow_prints_a_line_per_event_and_the_inbox_command_pastes_into_a_shell(workers, user):
    printed = agentq(workers.redis_url, "enqueue", "approval", user, "Please pay 100", "--follow").splitlines()
    invocation_id = re.fullmatch(r"enqueued (e-\S+) \(session \S+\); agentq follow \1", printed[0]).group(1)
    events = printed[1:-2]
    assert all(re.match(LOCAL_TIME + "  ", line) for line in events), events
    assert [line.split("  ", 1)[1] for line in events if "-- status" in line] == [
        "-- status: queued", "-- status: running", "-- status: parked"]
    assert any('calls ask_for_approval({"amount": 100})' in line for line in events), events
    assert not any(line.lstrip().startswith("{") for line in printed)  # no raw JSON
    waits, answer = printed[-2:]
    call_id = re.fullmatch(r"   waits for (\S+): ask_for_approval\(\{\"amount\": 100\}\)", waits).group(1)
    assert answer == f"""   answer: agentq respond {invocation_id} {call_id} '{{"status": "approved"}}'"""

    inbox = agentq(workers.redis_url, "inbox", "--user", user).splitlines()
    assert re.fullmatch(f"{LOCAL_TIME}  {invocation_id}  approval/{user}: 'Please pay 100'", inbox[0])
    assert inbox[1:] == [waits, answer]
    resumed = shell(workers.redis_url, inbox[2].removeprefix("   answer: ") + " --follow").splitlines()
    assert resumed[0] == f"{invocation_id} accepted the answer; it is queued"
    assert resumed[-1].endswith("-- status: completed")


def test_get_prints_the_record_as_fields_with_local_times_and_json_gives_the_wire_form(workers, user):
    enqueued = json.loads(agentq(workers.redis_url, "enqueue", "weather", user, "weather in Paris?", "--follow",
                                 "--json").splitlines()[0])
    invocation_id = enqueued["invocationId"]
    fields = dict(re.split(r"\s{2,}", line.strip(), maxsplit=1)
                  for line in agentq(workers.redis_url, "get", invocation_id).splitlines())
    assert (fields["invocation"], fields["app"], fields["user"], fields["status"], fields["message"]) == (
        invocation_id, "weather", user, "completed", "weather in Paris?")
    assert re.fullmatch(LOCAL_TIME, fields["created"]) and re.fullmatch(LOCAL_TIME, fields["finished"])
    wire = json.loads(agentq(workers.redis_url, "get", invocation_id, "--json"))
    assert (wire["id"], wire["status"], type(wire["createdAt"])) == (invocation_id, "completed", float)


def test_list_status_failed_shows_the_failed_invocations_of_every_user_as_a_table(workers, user):
    others = [f"{user}-a", f"{user}-b"]
    failed = [json.loads(agentq(workers.redis_url, "enqueue", "broken", who, "anything", "--follow",
                                "--json").splitlines()[0])["invocationId"] for who in others]
    agentq(workers.redis_url, "enqueue", "weather", user, "weather in Paris?", "--follow")
    listed = [json.loads(line) for line in
              agentq(workers.redis_url, "list", "--status", "failed", "--json").splitlines()]
    assert {record["id"] for record in listed} >= set(failed)
    assert {record["status"] for record in listed} == {"failed"}
    table = agentq(workers.redis_url, "list", "--status", "failed", "--app", "broken").splitlines()
    assert table[0].split() == ["invocation", "app", "user", "status", "updated", "message", "/", "error"]
    rows = {line.split()[0]: line.split() for line in table[1:]}
    assert {invocation_id: rows[invocation_id][1:4] for invocation_id in failed} == {
        failed[0]: ["broken", others[0], "failed"], failed[1]: ["broken", others[1], "failed"]}
    assert agentq(workers.redis_url, "list", "--status", "failed", "--app", "weather") == "no failed invocation\n"


def test_schedules_list_is_a_table_with_local_times(workers, user):
    agentq(workers.redis_url, "schedules", "create", "weather", user, "--every", "3600", "--message", "hi",
           "--id", "hourly")
    table = agentq(workers.redis_url, "schedules", "list", "weather", user).splitlines()
    assert table[0].split() == ["schedule", "app", "user", "when", "state", "next", "run", "runs", "last",
                                "invocation"]
    row = table[1].split()
    assert row[:6] == ["hourly", "weather", user, "every", "3600.0s", "active"]
    assert re.fullmatch(LOCAL_TIME, row[6]) and row[7:] == ["0", "-"]
    assert agentq(workers.redis_url, "schedules", "delete", "weather", user, "hourly") == "deleted hourly\n"
    assert agentq(workers.redis_url, "schedules", "list", "weather", user) == f"no schedule for {user!r} in 'weather'\n"
