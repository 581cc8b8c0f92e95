"""Which errors mean "the store is away for now": the worker hands work back on those instead of failing it."""

from __future__ import annotations

import pytest
from redis import exceptions as redis_errors

from runtime.redis_store.availability import is_store_unavailable


@pytest.mark.parametrize("error", [
    redis_errors.ConnectionError("Error 111 connecting to 127.0.0.1:7000. Connection refused."),
    redis_errors.TimeoutError("Timeout reading from socket"),
    redis_errors.ResponseError("LOADING Redis is loading the dataset in memory"),
    redis_errors.ResponseError("TRYAGAIN Multiple keys request during rehashing of slot"),
    # uvloop, when a command is written to a connection whose master was just killed (seen in a Cluster failover)
    RuntimeError("unable to perform operation on <TCPTransport closed=True reading=False 0x7f>; the handler is closed"),
])
def test_a_lost_connection_or_a_server_not_ready_is_the_store_being_away(error):
    assert is_store_unavailable(error)


@pytest.mark.parametrize("error", [
    redis_errors.AuthenticationError("invalid password"),
    redis_errors.ResponseError("ERR wrong number of arguments"),
    RuntimeError("a bug in a tool"),
    ValueError("bad data"),
])
def test_anything_else_is_not(error):
    assert not is_store_unavailable(error)
