"""Shards of the reaper's and watchdog's sets: in the user's slot on a Cluster, today's global keys on one node."""

from __future__ import annotations

from redis.crc import key_slot

from runtime.redis_store import keys
from worker.config.shards import shard_of, slot_tag


def test_a_shard_tag_lands_in_its_slot_and_a_single_node_keeps_the_global_keys():
    assert [key_slot(keys.dispatch_due(slot_tag(slot)).encode()) for slot in (0, 1, 5461, 16383)] == [
        0, 1, 5461, 16383]
    for app, user in (("app", "ann"), ("shop", "bob/with{odd}chars")):
        shard = shard_of(app, user, cluster=True)
        slots = {key_slot(key.encode()) for key in (
            keys.session_meta(app, user, "s1"), keys.lease_expiries(shard), keys.dispatch_due(shard),
            keys.call_deadlines(shard), keys.webhook_due(shard), keys.webhook_outbox(shard))}
        assert len(slots) == 1
    assert shard_of("app", "ann", cluster=False) == ""
    assert (keys.lease_expiries(""), keys.dispatch_due(""), keys.call_deadlines(""), keys.webhook_due(""),
            keys.webhook_outbox("")) == ("agentq:lease_expiries", "agentq:dispatch_due", "agentq:call_deadlines",
                                         "agentq:webhooks:due", "agentq:webhooks:outbox")
