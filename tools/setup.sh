#!/bin/sh
# setup.sh — everything a fresh Debian 12 machine needs to build and run Saccade:
# the system packages, the default model (data/fetch-model.sh) and a Meson build in build/.
# Safe to rerun: installed packages, a verified model and an existing build are kept.
set -eu
cd "$(dirname "$0")/.."

# Build and test dependencies, as Debian 12 ships them (DESIGN.md, "Platform").
PACKAGES="build-essential meson ninja-build pkg-config python3-pip unzip ca-certificates
  libopenblas-dev libopenblas0-openmp libsqlite3-dev libigraph-dev libgsl-dev libglib2.0-dev libjson-glib-dev zlib1g-dev libzstd-dev
  libgtk-4-dev libadwaita-1-dev gettext desktop-file-utils appstream-util xvfb xauth
  fonts-cantarell fonts-noto-cjk python3-numpy sqlite3 poppler-utils
  slurm-wlm munge parallel"
# (python3-numpy: the tests run Debian's /usr/bin/python3, never the python3 on PATH, and
# fail without NumPy there; sqlite3: the shell some tests edit databases with; poppler-utils:
# pdftotext, which test-cli-figure-options reads exported PDFs with. tests/lib.sh)
# (slurm-wlm, munge: the cluster suite starts a single-node Slurm; parallel: GNU parallel
# for tools/slurm/faithfulness-parallel.sh. docs/cluster.md)

missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing$missing"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
fi

data/fetch-model.sh

if [ ! -f build/build.ninja ]; then
  meson setup build
fi
meson compile -C build
