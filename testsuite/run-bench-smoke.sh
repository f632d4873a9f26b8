#!/bin/sh
# `make check`: bench/run --smoke -- every item of the side-by-side benchmark against perf,
# bpftrace and strace (bench/compare.py, issue 6) once, with tiny sizes (~30 s). It checks only
# that each ukstap figure and each untraced baseline comes out as a number, so the benchmark
# keeps working as the runtime changes; the figures themselves mean nothing at these sizes.
# A peer that is not installed is left out with a visible reason (scripts/install-deps installs
# them all). Needs root (BPF, perf tracepoints): skipped (77) without it, except under CI=true,
# where that is a failure.
top=${UKSTAP_TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
if [ "$(id -u)" != 0 ]; then
  if [ "${CI:-}" = true ]; then echo "FAIL: bench smoke test needs root under CI"; exit 1; fi
  echo "SKIP: bench smoke test needs root (BPF programs, perf tracepoints)"
  exit 77
fi
if [ ! -x /usr/bin/python3 ]; then
  echo "FAIL: bench/compare.py needs /usr/bin/python3"
  exit 1
fi
exec bash "$top/bench/run" --smoke
