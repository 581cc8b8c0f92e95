"""Reachability: a worker's background steps share one pair of log lines per Redis outage."""

from __future__ import annotations

import logging

from redis.exceptions import ConnectionError as RedisConnectionError

from worker.fleet.recovery import Reachability


def test_one_line_when_redis_goes_away_and_one_when_every_step_that_failed_is_back(caplog):
    reach = Reachability("worker w1")
    lost = RedisConnectionError("connection to Redis lost")
    with caplog.at_level(logging.WARNING, logger="agentq.worker"):
        reach.failed("heartbeat", lost)
        reach.failed("reap", lost)
        reach.failed("heartbeat", lost)
        reach.succeeded("alive_beat")  # never failed (it may not have touched Redis): says nothing
        reach.succeeded("heartbeat")  # the reaper still fails: not back yet
        reach.succeeded("reap")
        reach.succeeded("reap")

    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 2
    assert lines[0] == ("worker w1: Redis unreachable (ConnectionError: connection to Redis lost); "
                        "reconnecting with backoff")
    assert lines[1].startswith("worker w1: Redis reachable again after ")
