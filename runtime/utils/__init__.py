"""Helpers ADK users import from ``google.adk.utils``."""
