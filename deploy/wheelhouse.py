"""Download, on this host, the wheels an image built from ``requirements.lock`` installs: a wheelhouse.

    python deploy/wheelhouse.py --image agentq-base:bookworm --dest /var/cache/agentq-ci/wheels

For builds that cannot reach PyPI from inside (the Dockerfile's ``WHEELHOUSE`` build arg reads the folder over
HTTP). The lock is universal, so which of its lines apply is decided by their environment markers, and those
must be evaluated for the image's Python, not this host's (``async-timeout`` is only needed below 3.11.3, say):
the marker environment is read by running ``python3`` in the image. Wheel tags are this host's, so the host must
match the image's platform (Linux, CPU, glibc) and Python minor version; a mismatch stops here with both named.
Files already in ``--dest`` are not fetched again. Prints the number of wheels.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement

# What packaging.markers.default_environment() computes, spelled out so the image needs nothing but python3.
MARKER_ENV_PROBE = """
import json, os, platform, sys
print(json.dumps({
    "implementation_name": sys.implementation.name,
    "implementation_version": platform.python_version(),
    "os_name": os.name,
    "platform_machine": platform.machine(),
    "platform_release": platform.release(),
    "platform_system": platform.system(),
    "platform_version": platform.version(),
    "python_full_version": platform.python_version(),
    "platform_python_implementation": platform.python_implementation(),
    "python_version": ".".join(platform.python_version_tuple()[:2]),
    "sys_platform": sys.platform,
    "libc": "-".join(platform.libc_ver()),
}))
"""


def image_environment(image: str) -> dict[str, str]:
    """The marker environment of ``python3`` in ``image`` (run with no network: it only prints)."""
    out = subprocess.run(["docker", "run", "--rm", "--network", "none", image, "python3", "-c", MARKER_ENV_PROBE],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def host_environment() -> dict[str, str]:
    """The same probe, run by the interpreter whose pip downloads the wheels."""
    out = subprocess.run([sys.executable, "-c", MARKER_ENV_PROBE], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def check_same_platform(image: dict[str, str], host: dict[str, str]) -> None:
    """Wheels are chosen by this host's tags: refuse when they would not fit the image."""
    keys = ("sys_platform", "platform_machine", "python_version", "implementation_name", "libc")
    differ = {key: (host[key], image[key]) for key in keys if host[key] != image[key]}
    if differ:
        raise SystemExit(f"wheelhouse: this host's wheels would not fit the image: {differ!r} (host, image)")


def lock_entries(lock: Path) -> list[str]:
    """Each requirement of a pip-compile lock as one line: ``name==version [; marker] --hash=... ...``."""
    entries, current = [], ""
    for raw in lock.read_text().splitlines():
        line = raw.split("#", 1)[0].rstrip() if not raw.lstrip().startswith("--hash") else raw.rstrip()
        if not line.strip():
            continue
        current += " " + line.rstrip("\\").strip()
        if not line.endswith("\\"):
            entries.append(current.strip())
            current = ""
    if current.strip():
        entries.append(current.strip())
    return entries


def applicable(entries: list[str], env: dict[str, str]) -> list[str]:
    """The entries whose markers hold in ``env``, markers dropped (``name==version --hash=...``)."""
    kept = []
    for entry in entries:
        spec, _, hashes = entry.partition(" --hash")
        requirement = Requirement(spec)
        if requirement.marker is None or requirement.marker.evaluate(env):
            kept.append(f"{requirement.name}{requirement.specifier} --hash{hashes}")
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", required=True, help="the base image whose python3 the wheels are for")
    parser.add_argument("--dest", required=True, type=Path, help="the wheelhouse folder (kept between runs)")
    parser.add_argument("--lock", default=Path(__file__).resolve().parents[1] / "requirements.lock", type=Path)
    args = parser.parse_args(argv)

    env = image_environment(args.image)
    check_same_platform(env, host_environment())
    args.dest.mkdir(parents=True, exist_ok=True)
    wanted = args.dest / "requirements.txt"
    wanted.write_text("\n".join(applicable(lock_entries(args.lock), env)) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                    "--only-binary=:all:", "--no-deps", "--require-hashes", "-d", str(args.dest), "-r", str(wanted)],
                   check=True)
    print(len(list(args.dest.glob("*.whl"))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
