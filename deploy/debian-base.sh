#!/usr/bin/env bash
# Makes a Debian base image with debootstrap, for machines that cannot pull python:3.11-slim from a registry.
#
#   deploy/debian-base.sh [TAG]        (default tag: agentq-base:bookworm; prints the tag when done)
#
# The root file system is Debian bookworm (minbase) with python3 (3.11, the minor version the locks are made for),
# python3-venv (the Dockerfile installs into a virtualenv) and ca-certificates. debootstrap takes minutes, so its
# tarball is kept in AGENTQ_CI_CACHE (default /var/cache/agentq-ci) and re-imported on later runs; delete the
# tarball to make a fresh one. Needs root, debootstrap and a running Docker engine.
set -euo pipefail

tag=${1:-agentq-base:bookworm}
suite=bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${AGENTQ_CI_CACHE:-/var/cache/agentq-ci}
tarball="$cache/debian-$suite-python3.tar"

if ! docker info >/dev/null 2>&1; then
  echo "debian-base: no Docker engine answers (deploy/docker-engine.sh starts one)" >&2
  exit 1
fi
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"
  exit 0
fi

mkdir -p "$cache"
if [ ! -s "$tarball" ]; then
  if [ "$(id -u)" != 0 ] || ! command -v debootstrap >/dev/null 2>&1; then
    echo "debian-base: making $tarball needs root and debootstrap (apt-get install debootstrap)" >&2
    exit 1
  fi
  started=$(date +%s)
  rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
  trap 'rm -rf "$rootfs"' EXIT
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates "$suite" "$rootfs" "$mirror" \
    >"$cache/debootstrap.log" 2>&1 || { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
  # Package lists and apt caches only make the image bigger.
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  # Written under a temporary name first, so an interrupted run never leaves a truncated tarball to be reused.
  tar -C "$rootfs" --numeric-owner -cf "$tarball.partial" .
  mv "$tarball.partial" "$tarball"
  echo "debootstrap: $suite root file system made in $(( $(date +%s) - started )) s, cached at $tarball" >&2
fi
docker import --change 'ENV LANG=C.UTF-8' "$tarball" "$tag" >/dev/null
echo "$tag"
