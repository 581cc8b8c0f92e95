"""Views: the wire schemas and the read-only figures the routes answer with: workflow node runs, app info, metrics and their scrape-time stats, webhook figures, traces, worker presence."""
