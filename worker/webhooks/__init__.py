"""Webhooks: their settings, the outbox in Redis, Standard Webhooks signatures, the SSRF rule, and the deliverer every worker runs."""
