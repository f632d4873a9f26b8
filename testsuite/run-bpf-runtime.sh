#!/bin/sh
# BPF runtime tests (runtime/common, runtime/bpf):
#  1. native unit test of common/stp_format.h against docs/STAP-FORMATS.md §1/§3 (always runs);
#  2. for each testsuite/bpf-runtime/t_*.bpf.c, at MAXSTRINGLEN 128 and 512: compile with
#     clang -target bpf exactly as pass 4 does, load it on this kernel (verifier), run it on
#     getppid() and compare the decoded records with expected/<test>_<len>.out.
# Part 2 needs root, clang, bpftool, libbpf and /sys/kernel/btf/vmlinux; without them it is
# reported as skipped. vmlinux.h is generated into the build dir (never committed):
#     bpftool btf dump file /sys/kernel/btf/vmlinux format c > $B/vmlinux.h
# Prints "N passed, N failed"; exit 1 on any failure.
top=${UKSTAP_TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
B=${UKSTAP_TOP_BUILDDIR:-$top}/testsuite/bpf-runtime/build
T=$top/testsuite/bpf-runtime
CLANG=${BPF_CLANG:-clang}
CC=${CC:-cc}
mkdir -p "$B"
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*"; }

if $CC -std=c99 -O2 -Wall -I"$top/runtime" "$T/format_native_test.c" -o "$B/format_native_test" &&
   "$B/format_native_test" > "$B/format_native_test.log"; then ok
else ko "format_native_test"; cat "$B/format_native_test.log"; fi
if command -v c++ > /dev/null && c++ -x c++ -std=c++17 -O2 -I"$top/runtime" "$T/format_native_test.c" \
     -o "$B/format_native_test_cxx" && "$B/format_native_test_cxx" > /dev/null; then ok
else ko "format_native_test (as C++)"; fi

if [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/btf/vmlinux ] || ! command -v bpftool > /dev/null ||
   ! command -v "$CLANG" > /dev/null; then
  # Under CI (root, everything installed) a BPF test must run: missing pieces are a failure.
  if [ -n "${CI:-}" ]; then ko "BPF tests need root, bpftool, $CLANG and kernel BTF in CI"
  else echo "SKIP: BPF tests need root, bpftool, $CLANG and kernel BTF"; fi
  echo "$pass passed, $fail failed"
  [ $fail = 0 ]; exit $?
fi
[ -s "$B/vmlinux.h" ] || bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$B/vmlinux.h" || ko "vmlinux.h"
$CC -O1 -g -I"$top/runtime" "$T/bpfrt_loader.c" -lbpf -o "$B/bpfrt_loader" || ko "bpfrt_loader build"
arch=$(uname -m | sed 's/x86_64/x86/; s/aarch64/arm64/')
for src in "$T"/t_*.bpf.c; do
  t=$(basename "$src" .bpf.c)
  for M in 128 512; do
    o="$B/${t}_$M.o"
    if ! $CLANG -target bpf -mcpu=v3 -O2 -g -D__UKSTAP_BPF__ -D__TARGET_ARCH_$arch -DSTP_MAXSTRINGLEN=$M \
         -I"$top/runtime" -I"$B" -c "$src" -o "$o" 2> "$B/${t}_$M.cc.log"; then
      ko "$t MAXSTRINGLEN=$M: compile"; cat "$B/${t}_$M.cc.log"; continue
    fi
    "$B/bpfrt_loader" "$o" --run --fmt 7=LLLLLLSSS --fmt 1=SSSSSSSSSSSSSSSSSSSSSS \
      --fmt 2=LSLSLSLSLSLSLSLSLSLSLSLSLSLSLSLS --fmt 3=LLLLSSL > "$B/${t}_$M.log" 2>&1
    if grep -q '^LOAD FAILED' "$B/${t}_$M.log"; then
      ko "$t MAXSTRINGLEN=$M: verifier"; tail -5 "$B/${t}_$M.log"; continue
    fi
    grep '^loaded ' "$B/${t}_$M.log" | sed "s/^/  $t $M: /"
    if grep -v '^loaded ' "$B/${t}_$M.log" | diff -u "$T/expected/${t}_$M.out" - > "$B/${t}_$M.diff"; then ok
    else ko "$t MAXSTRINGLEN=$M: output"; cat "$B/${t}_$M.diff"; fi
  done
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
