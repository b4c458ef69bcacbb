#!/bin/bash
# gpu-check.sh — the prepared checks of the CUDA backend for a session that is lent a GPU
# (an H200, 15 minutes of device time in all). docs/cuda.md says what each check shows and
# what was verified without a GPU.
#
# Two steps, because the GPU machine receives only the working tree (no build, no model,
# maybe none of GLib/SQLite/OpenBLAS), and a command there may run 10 minutes at most:
#
#   1. here:   tools/gpu-check.sh pack [BUILD_DIR]
#      builds the 'gpu' suite's programs, test-backend-ops and the CUDA module in BUILD_DIR
#      (default: build), and copies them with the non-system libraries they load into
#      .gpu-carry/ (ignored by git); prints its size and the call to make.
#   2. there:  tools/gpu-check.sh run [STAGE ...]     (the device tool's run, carry
#      [".gpu-carry"], timeout_s 600)
#      runs the stages in this order, each under its own timeout, skipping what would
#      pass the budget (GPU_CHECK_BUDGET_S, default 500 s):
#        tests      test-cuda-device, test-backend-ops (its cuda rows), test-cuda-attention,
#                   test-cuda-model (SmolLM2-shaped random model: the real one does not
#                   travel)
#        bench      bench-cuda-attention at n = 512 .. 8192 (9 over 3 heads, d 64), and the
#                   whole forward with every head captured ("shaped", 30 layers)
#        peers      tools/gpu-peers.py (PyTorch SDPA, HF eager output_attentions) when torch
#                   imports there, and the ratios the issue asks for
#        sanitizer  compute-sanitizer memcheck on one capture (refused on gVisor machines:
#                   then reported, not failed)
#      Everything printed is also written to $OUT (gpu-check.log, bench.jsonl, peers.jsonl)
#      when $OUT is set. Exit status: 0 when every test stage that ran passed.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
carry=$here/.gpu-carry

pack () {
  local build=${1:-build}
  local progs="tests/test-cuda-device tests/test-cuda-attention tests/test-cuda-model
               tests/test-backend-ops tests/gpu/bench-cuda-attention"
  cd "$here" || exit 2
  meson compile -C "$build" $progs cuda/saccade-cuda || exit 1
  rm -rf "$carry"
  mkdir -p "$carry/bin" "$carry/lib"
  for p in $progs; do cp "$build/$p" "$carry/bin/"; done
  cp "$build/cuda/libsaccade-cuda.so" "$carry/lib/"
  # the libraries they load that are not glibc's or CUDA's
  for f in "$carry"/bin/* "$carry/lib/libsaccade-cuda.so"; do ldd "$f"; done \
    | awk '/=>/ { print $3 }' | sort -u \
    | grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libgcc_s|libstdc\+\+)\.so|/libcu(da|dart|blas|blasLt)\.so' \
    | while read -r lib; do cp -L "$lib" "$carry/lib/"; done
  git -C "$here" rev-parse --git-path info/exclude | while read -r ex; do
    grep -qx '/.gpu-carry/' "$ex" 2>/dev/null || echo '/.gpu-carry/' >>"$ex"
  done
  du -sh "$carry"
  ls "$carry/bin" "$carry/lib"
  echo "now: run (carry [\".gpu-carry\"], timeout_s 600): bash tools/gpu-check.sh run"
}

log () { echo "$*"; }

run () {
  local stages=${*:-tests bench peers sanitizer}
  local budget=${GPU_CHECK_BUDGET_S:-500} t0=$SECONDS failed=0 out=${OUT:-}
  local bin
  cd "$here" || exit 2
  if [ -n "$out" ]; then exec > >(tee -a "$out/gpu-check.log") 2>&1; fi
  if [ -d "$carry/bin" ]; then
    bin=$carry/bin
    export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export SC_CUDA_MODULE=$carry/lib/libsaccade-cuda.so
  else
    bin=$here/build/tests
    log "# no .gpu-carry/: using build/ (run 'tools/gpu-check.sh pack' where it was built)"
  fi
  export SC_TEST_SOURCE_DIR=$here SC_TEST_REFERENCE_DIR=$here/tests/reference
  export G_DEBUG=gc-friendly OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
  log "# $(date -u +%FT%TZ) gpu-check: stages: $stages; budget ${budget}s"
  nvidia-smi -L 2>&1 | sed 's/^/# /'
  nvcc --version 2>/dev/null | tail -1 | sed 's/^/# /'
  # a machine with a GPU must not skip: a skip there is a failure (a library not found)
  local have_gpu=0
  nvidia-smi -L 2>/dev/null | grep -q '^GPU' && have_gpu=1
  # cuBLAS where the module's rpath (/usr/local/cuda/lib64) does not find it: the CUDA
  # toolkit's other folders, or the pip wheel PyTorch brings
  if ! ldconfig -p 2>/dev/null | grep -q 'libcublas\.so\.13' \
     && [ ! -e /usr/local/cuda/lib64/libcublas.so.13 ]; then
    for d in /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib64 \
             $(python3 -c 'import nvidia.cublas, nvidia.cuda_runtime, os
for m in (nvidia.cublas, nvidia.cuda_runtime):
    print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null); do
      if [ -e "$d/libcublas.so.13" ] || [ -e "$d/libcudart.so.13" ]; then
        export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d
        log "# CUDA libraries from $d"
      fi
    done
  fi

  # step NAME TIMEOUT CMD...: runs CMD unless the budget would pass; 77 = skipped
  step () {
    local name=$1 limit=$2 rc
    shift 2
    if [ $((SECONDS - t0 + limit)) -gt "$budget" ]; then
      log "== $name: NOT RUN (would pass the ${budget}s budget at $((SECONDS - t0))s)"
      return 0
    fi
    log "== $name"
    timeout "$limit" "$@"
    rc=$?
    case $rc in
      0) log "== $name: ok ($((SECONDS - t0))s)" ;;
      77) if [ "$have_gpu" = 1 ]; then
            log "== $name: SKIPPED on a machine with a GPU: counted as a failure"; failed=1
          else
            log "== $name: SKIPPED"
          fi ;;
      124) log "== $name: TIMED OUT after ${limit}s"; failed=1 ;;
      *) log "== $name: FAILED (exit $rc)"; failed=1 ;;
    esac
    return 0
  }

  for stage in $stages; do
    case $stage in
      tests)
        step test-cuda-device 60 "$bin/test-cuda-device" --verbose
        step test-backend-ops 120 "$bin/test-backend-ops"   # cpu rows too: ~1 s
        step test-cuda-attention 120 "$bin/test-cuda-attention" --verbose
        step test-cuda-model 180 "$bin/test-cuda-model" --verbose
        ;;
      bench)
        step bench-cuda-attention 150 bash -c "\"$bin/bench-cuda-attention\" --reps 5 \
          --model shaped 512 1024 2048 4096 8192 | tee ${out:-/tmp}/bench.jsonl"
        ;;
      peers)
        step gpu-peers 150 bash -c "python3 \"$here/tools/gpu-peers.py\" --reps 10 \
          --hf-max 2048 512 1024 2048 4096 8192 | tee ${out:-/tmp}/peers.jsonl"
        python3 - "${out:-/tmp}/bench.jsonl" "${out:-/tmp}/peers.jsonl" <<'PY' || true
import json, sys
def rows(p):
    try:
        return [json.loads(l) for l in open(p) if l.startswith("{")]
    except OSError:
        return []
ours, peers = rows(sys.argv[1]), rows(sys.argv[2])
sdpa = {(r["n"], r["dtype"]): r for r in peers if r["kind"] == "sdpa"}
hf = {r["n"]: r for r in peers if r["kind"] == "hf_eager"}
for r in ours:
    n = r["n"]
    if r["kind"] == "attention":
        for dt in ("float16", "float32"):
            if (n, dt) in sdpa:
                print(f"ratio n={n}: flash TFLOP/s / SDPA {dt} = "
                      f"{r['flash_tflops'] / sdpa[(n, dt)]['tflops']:.3f} (goal >= 0.9)")
        print(f"ratio n={n}: capture bytes/s on the device / 4.8 TB/s = "
              f"{r['capture_frac_hbm']:.3f} (goal >= 0.6); into host memory "
              f"{r['capture_gbs']:.1f} GB/s")
    elif r["kind"] == "forward" and n in hf:
        print(f"ratio n={n}: HF eager output_attentions / our forward with capture = "
              f"{hf[n]['seconds'] / r['seconds']:.2f}x on the GPU, "
              f"{hf[n]['seconds_to_host'] / r['seconds']:.2f}x with attentions on the host "
              f"(goal >= 5)")
PY
        ;;
      sanitizer)
        if command -v compute-sanitizer >/dev/null; then
          step memcheck 150 compute-sanitizer --tool memcheck --error-exitcode 99 \
            "$bin/test-cuda-attention" -p /cuda-attention/n66-mask-third-window9 \
            -p /cuda-attention/cache-5-of-83
        else
          log "== memcheck: NOT RUN (no compute-sanitizer on this machine)"
        fi
        ;;
      *) log "unknown stage '$stage' (tests bench peers sanitizer)"; exit 2 ;;
    esac
  done
  log "# done in $((SECONDS - t0))s; $([ $failed = 0 ] && echo 'no failures' || echo 'FAILURES above')"
  return $failed
}

case ${1:-run} in
  pack) shift; pack "$@" ;;
  run) shift; run "$@" ;;
  *) echo "usage: $0 pack [BUILD_DIR] | run [tests|bench|peers|sanitizer ...]" >&2; exit 2 ;;
esac
