"""The fleet: session leases and fencing, the reaper and sweeper passes every worker runs, riding out Redis trouble, crash attribution, and worker liveness."""
