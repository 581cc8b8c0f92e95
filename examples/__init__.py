"""Runnable agent apps: ``examples.weather:app`` and ``examples.reimbursement:app``."""
