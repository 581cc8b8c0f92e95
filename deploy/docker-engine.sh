#!/usr/bin/env bash
# Makes sure a Docker engine answers on this machine, for CI's deployment test.
#
#   deploy/docker-engine.sh            exit 0 when `docker info` answers (started here if need be), else 1
#
# When no engine answers and we are root: installs Debian's docker.io, docker-compose and debootstrap with apt-get
# if dockerd is missing, then starts dockerd in the background (its log in /tmp/agentq-dockerd.log) and waits
# up to 60 s for it. Prints one line saying what it did or why there is no engine.
set -uo pipefail

if docker info >/dev/null 2>&1; then
  echo "docker engine: already running"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "docker engine: none answers and starting one needs root"
  exit 1
fi
if ! command -v dockerd >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
  if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io docker-compose debootstrap; } \
      >/tmp/agentq-docker-install.log 2>&1; then
    echo "docker engine: apt-get could not install docker.io (see /tmp/agentq-docker-install.log)"
    exit 1
  fi
fi
nohup dockerd >/tmp/agentq-dockerd.log 2>&1 &
for _ in $(seq 60); do
  if docker info >/dev/null 2>&1; then
    echo "docker engine: dockerd started (log: /tmp/agentq-dockerd.log)"
    exit 0
  fi
  sleep 1
done
echo "docker engine: dockerd did not answer within 60 s (see /tmp/agentq-dockerd.log)"
exit 1
