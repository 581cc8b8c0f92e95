"""Apps: a named root agent and its app-wide settings, the unit a worker loads (``google.adk.apps``)."""

from ._configs import EventsCompactionConfig, ResumabilityConfig
from .app import App, load_app

__all__ = ["App", "EventsCompactionConfig", "ResumabilityConfig", "load_app"]
