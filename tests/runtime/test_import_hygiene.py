"""The dependency arrow: importing the runtime must not drag in the distributed stack."""

import subprocess
import sys


def test_importing_runtime_pulls_in_neither_celery_fastapi_nor_redis():
    code = (
        "import sys, runtime, runtime.events, runtime.sessions, runtime.models, runtime.artifacts\n"
        "heavy = sorted(m for m in ('celery', 'fastapi', 'redis') if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""
