"""Streams: server-sent events framing and sending, the /run_sse fast lane, the inbox change feed follower and a small SSE reader for clients."""
