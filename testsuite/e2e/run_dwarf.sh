#!/bin/bash
# The in-kernel DWARF unwinder (issue 5) on code without frame pointers.
#
# Truth: the traced program's own libunwind backtrace (testsuite/e2e/progs/ustack_prog.c, built
# -O2 -fomit-frame-pointer), readelf's symbols (ustack_check.py). Every frame must equal
# libunwind's, through libc down to _start, with none marked inexact. Root only; under CI=true
# not being root is a failure, never a skip.
# e2e-schedule: first (run-e2e.sh): one of the longest scripts.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
CHECK="python3 $UKSTAP_TOP_SRCDIR/testsuite/e2e/ustack_check.py"
PROGS="$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs"

runp() {  # runp NAME PROG_OUT CMD...: the traced program's stdout into PROG_OUT
  local name=$1 out=$2; shift 2
  "$@" > "$out" 2> "$out.err"
  local rc=$?
  t "$name" 0 '' '' -- bash -c "cat '$out.err' >&2; exit $rc"
}
# runs NAME PROG_OUT CMD...: runp for timer samples. A sample lands anywhere, also in a process's
# first instants, before the tables of its code are loaded and its mappings known: the few walks
# that stop early there are counted in the exit warning, the only stderr line allowed (the
# checks that follow bound how many stacks are short).
runs() {
  local name=$1 out=$2; shift 2
  "$@" > "$out" 2> "$out.err"
  local rc=$?
  t "$name" 0 '' '' -- bash -c "grep -Ev '^WARNING: [0-9]+ of [0-9]+ user stacks were cut short: ' '$out.err' >&2; exit $rc"
}

P="$T_TMP/ustack_nofp" L="$T_TMP/libustack_nofp.so"
t_build "the test programs" gcc -O2 -g -fomit-frame-pointer -o "$P" "$PROGS/ustack_prog.c" -lunwind -ldl -lpthread &&
  t_build "the test programs" gcc -O2 -g -fomit-frame-pointer -fPIC -shared -o "$L" "$PROGS/ustack_lib.c" || { t_done; exit; }
GETPPID='probe syscall.getppid { if (pid() == target()) print_ubacktrace() }'

runp "-O2 -fomit-frame-pointer chain: run" "$T_TMP/chain.prog" \
  "$UKSTAP" -o "$T_TMP/chain.out" -d "$P" --ldd -e "$GETPPID" -c "$P chain"
t "chain: every frame = libunwind's, through libc to _start, none inexact" 0 '' '' -- \
  $CHECK exact "$T_TMP/chain.out" "$T_TMP/chain.prog"
t "chain: symbols = readelf's" 0 '' '' -- \
  $CHECK chain "$T_TMP/chain.out" "$T_TMP/chain.prog" "$P" chain_12 main

runp "fileline: run" "$T_TMP/fl.prog" "$UKSTAP" -o "$T_TMP/fl.out" \
  -e 'probe syscall.getppid { if (pid() == target()) print_ubacktrace_fileline() }' -c "$P chain"
t "print_ubacktrace_fileline: FILE:LINE = addr2line's" 0 '' '' -- $CHECK fileline "$T_TMP/fl.out" "$P"

runp "thread: run" "$T_TMP/thr.prog" "$UKSTAP" -o "$T_TMP/thr.out" -d "$P" --ldd -e "$GETPPID" -c "$P threads"
t "thread: every frame = libunwind's, through start_thread and clone3" 0 '' '' -- \
  $CHECK exact "$T_TMP/thr.out" "$T_TMP/thr.prog"

# A library loaded with dlopen after the run started: its table is compiled when the tracker
# sees the mapping.
runp "dlopen: run" "$T_TMP/dl.prog" "$UKSTAP" -o "$T_TMP/dl.out" -d "$P" --ldd -e "$GETPPID" -c "$P dlopen $L"
t "dlopen: every frame = libunwind's" 0 '' '' -- $CHECK exact "$T_TMP/dl.out" "$T_TMP/dl.prog"

# A 96 KiB frame: its CFA offset does not fit the row's int16 and is stored scaled.
runp "96 KiB frame: run" "$T_TMP/big.prog" "$UKSTAP" -o "$T_TMP/big.out" -e "$GETPPID" -c "$P bigframe"
t "96 KiB frame: every frame = libunwind's, through big_frame" 0 '' '' -- bash -c "
  $CHECK exact '$T_TMP/big.out' '$T_TMP/big.prog' && grep -q ' : big_frame+0x' '$T_TMP/big.out'"

# glibc's vfork pops its return address into rdi (the child shares the stack): at the parent's
# return from the syscall the leaf row says RA = rdi. Frame 1 is do_vfork at the vfork call,
# frames 2.. = libunwind's frames 2.. (taken in do_vfork just before).
runp "vfork: run" "$T_TMP/vf.prog" "$UKSTAP" -o "$T_TMP/vf.out" \
  -e 'probe syscall.vfork.return { if (pid() == target()) print_ubacktrace() }' -c "$P vfork"
t "vfork: the RA in rdi: __vfork, do_vfork, then libunwind's frames" 0 '' '' -- python3 -c "
import re, sys
sys.path.insert(0, '$UKSTAP_TOP_SRCDIR/testsuite/e2e')
from ustack_check import stacks
truth = [int(x, 16) for x in re.search(r'^truth: (.*)\$', open('$T_TMP/vf.prog').read(), re.M).group(1).split()]
st = stacks(open('$T_TMP/vf.out').read())
assert len(st) == 1, st
fr = st[0]
names = [f['name'] for f in fr]
assert names[0] in ('__vfork', 'vfork', '__libc_vfork'), names
assert names[1] == 'do_vfork', names
assert [f['pc'] for f in fr[2:]] == truth[2:], (names, [hex(f['pc']) for f in fr], [hex(x) for x in truth])
assert not any(f['inexact'] for f in fr), names
"

# A lazily bound first call: through ld.so's _dl_runtime_resolve_xsave*, whose CFA is rbx + 56
# (it realigns the stack), to an IFUNC resolver that _dl_fixup calls.
LZ="$T_TMP/ustack_lazy"
if t_build "the lazy-binding test program" gcc -O2 -g -fomit-frame-pointer -DLAZY_LIB -o "$LZ" "$PROGS/ustack_prog.c" -L"$T_TMP" -lustack_nofp \
     -Wl,-rpath,"$T_TMP" -Wl,-z,lazy -lunwind -ldl -lpthread; then
  runp "lazy binding: run" "$T_TMP/lz.prog" env -u LD_BIND_NOW "$UKSTAP" -o "$T_TMP/lz.out" -e "$GETPPID" -c "$LZ lazy"
  t "lazy binding: every frame = libunwind's, through _dl_runtime_resolve (rbx-based CFA)" 0 '' '' -- bash -c "
    $CHECK exact '$T_TMP/lz.out' '$T_TMP/lz.prog' && grep -q ' : _dl_runtime_resolve' '$T_TMP/lz.out'"
fi

# Without -d: the tables come from the tracker (the -c binary and what it maps).
runp "no -d: run" "$T_TMP/nod.prog" "$UKSTAP" -o "$T_TMP/nod.out" -e "$GETPPID" -c "$P chain"
t "no -d: every frame = libunwind's" 0 '' '' -- $CHECK exact "$T_TMP/nod.out" "$T_TMP/nod.prog"

# A syscall from a signal handler: through the kernel's signal frame (__restore_rt) back into
# the interrupted code.
runp "signal handler: run" "$T_TMP/sig.prog" "$UKSTAP" -o "$T_TMP/sig.out" -e "$GETPPID" -c "$P signal"
t "signal handler: every frame = libunwind's, through __restore_rt" 0 '' '' -- bash -c "
  $CHECK exact '$T_TMP/sig.out' '$T_TMP/sig.prog' && grep -q ' : __restore_rt+0x0/' '$T_TMP/sig.out'"

# 512-deep recursion unwinds completely when asked; the default depth stops at 128 and says so.
runp "recursion 512: run" "$T_TMP/rec.prog" "$UKSTAP" -o "$T_TMP/rec.out" -D MAXBACKTRACE=600 \
  -e "$GETPPID" -c "$P recurse 512"
t "recursion 512 (-D MAXBACKTRACE=600): every frame = libunwind's" 0 '' '' -- \
  $CHECK exact "$T_TMP/rec.out" "$T_TMP/rec.prog"
t "recursion 512, default depth: run" 0 '' '' -- bash -c "
  '$UKSTAP' -v -o '$T_TMP/rec2.out' -e '$GETPPID' -c '$P recurse 512' > /dev/null 2> '$T_TMP/rec2.err'"
t "recursion 512, default depth: 128 frames, then the line that says the depth limit cut it (-v: 1 such walk)" 0 '' '' -- bash -c "
  [ \$(grep -c '^ 0x' '$T_TMP/rec2.out') = 128 ] && [ \$(wc -l < '$T_TMP/rec2.out') = 129 ] &&
  [ \"\$(tail -n 1 '$T_TMP/rec2.out')\" = '<user stack cut short: depth limit (MAXBACKTRACE)>' ] &&
  grep -q 'walks ended by: .*1 depth limit (MAXBACKTRACE)' '$T_TMP/rec2.err'"

# Timer samples: in the vDSO (clock_gettime's fast path) and anywhere in sort, user or kernel
# mode. Every return address must follow a call instruction (objdump), stacks reach _start.
runs "vdso samples: run" "$T_TMP/vdso.prog" "$UKSTAP" -o "$T_TMP/vdso.out" \
  -e 'probe timer.profile { if (pid() == target()) { println("== sample"); print_ubacktrace() } }' \
  -c "$P vdso 1"
t "vdso samples: stacks from [vdso] reach _start (>= 95%), none inexact" 0 '' '' -- bash -c "
  awk '/^== sample/ {if (s != \"\") print s; s=\"\"; first=1; next} {if (first) {s=\$0; first=0} else last=\$0; s=s \"|\" \$0} END {print s}' '$T_TMP/vdso.out' |
    grep '^ 0x[0-9a-f]* : [^ ]* \[\[vdso\]\]' > '$T_TMP/vdso.stacks'
  n=\$(wc -l < '$T_TMP/vdso.stacks'); ok=\$(grep -c ': _start+0x[0-9a-f]*/0x[0-9a-f]* \[$P\]\$' '$T_TMP/vdso.stacks')
  [ \$n -ge 10 ] && [ \$ok -ge \$((n * 95 / 100)) ] && ! grep -q inexact '$T_TMP/vdso.out' || { echo \"\$ok of \$n\"; exit 1; }"
t "vdso samples: return addresses follow calls" 0 '' '' -- $CHECK callsites "$T_TMP/vdso.out" 50

seq 1000000 | shuf --random-source=<(yes) > "$T_TMP/sortme"
runs "sort samples: run" "$T_TMP/sort.prog" "$UKSTAP" -o "$T_TMP/sort.out" -d /usr/bin/sort --ldd \
  -e 'probe timer.profile { if (execname() == "sort") { log(pn()); print_ubacktrace() } }' \
  -c "sort $T_TMP/sortme -o /dev/null"
# sort sorts in threads: their stacks end at the thread start (clone3's STOP row). A sample in a
# dying process may stop early (its memory is going away): >= 90% must reach an entry point.
t "sort samples: stacks reach sort's entry point or clone3 (>= 90%)" 0 '' '' -- bash -c "
  n=\$(grep -c '^timer.profile\$' '$T_TMP/sort.out')
  ends=\$(awk '/^timer.profile/ {if (prev) print prev; prev=\"\"; next} {prev=\$0} END {print prev}' '$T_TMP/sort.out' | grep -cE '/usr/bin/sort\]\$| : clone3\+')
  [ \$n -ge 20 ] && [ \$ends -ge \$((n * 90 / 100)) ] || { echo \"\$ends of \$n\"; exit 1; }"
t "sort samples: return addresses follow calls (objdump)" 0 '' '' -- $CHECK callsites "$T_TMP/sort.out" 100

# The line users type, `make seed` (its script and options read from Makefile.am): Debian's
# stripped, frame-pointer-less ls (its own calls only: other processes on a busy machine read
# directories too, and they are not targets, so they have no tables).
SEED_SCRIPT=$(sed -n 's/^SEED_SCRIPT = //p' "$UKSTAP_TOP_SRCDIR/Makefile.am")
SEED_ARGS=$(sed -n 's/^SEED_ARGS = //p' "$UKSTAP_TOP_SRCDIR/Makefile.am")
eval "runp 'ls (make seed): run' '$T_TMP/ls.prog' '$UKSTAP' -o '$T_TMP/ls.out' $SEED_ARGS -e \"\$SEED_SCRIPT\""
t "ls (make seed): each stack starts at __getdents64 and ends at ls's _start" 0 '' '' -- bash -c "
  n=\$(grep -c '^syscall.getdents\$' '$T_TMP/ls.out')
  first=\$(grep -A1 '^syscall.getdents\$' '$T_TMP/ls.out' | grep -c ' : __getdents64+0x')
  last=\$(awk '/^syscall/ {if (prev) print prev; prev=\"\"; next} {prev=\$0} END {print prev}' '$T_TMP/ls.out' | grep -c ' : _start+0x[0-9a-f]*/0x[0-9a-f]* \[/usr/bin/ls\]\$')
  [ \"\$n\" -ge 1 ] && [ \"\$first\" = \"\$n\" ] && [ \"\$last\" = \"\$n\" ] || { echo \"n=\$n first=\$first last=\$last\"; cat '$T_TMP/ls.out'; exit 1; }"
t "ls (make seed): readdir64 and __libc_start_main are on the way, no frame is inexact or unnamed" 0 '' '' -- bash -c "
  grep -qE ' : _*readdir64\+0x' '$T_TMP/ls.out' && grep -q ' : __libc_start_main' '$T_TMP/ls.out' &&
  ! grep -q 'inexact' '$T_TMP/ls.out' && $CHECK symbols '$T_TMP/ls.out'"
# The same stack 200 times (the per-CPU row cache serves the return addresses after the first):
# every stack must still be libunwind's.
runp "chain x200: run" "$T_TMP/c200.prog" "$UKSTAP" -o "$T_TMP/c200.out" -d "$P" --ldd \
  -e 'probe syscall.getppid { if (pid() == target()) { println("=="); print_ubacktrace() } }' -c "$P chain 200"
t "chain x200: 200 stacks, every one = libunwind's" 0 '' '' -- python3 -c "
import re, sys
sys.path.insert(0, '$UKSTAP_TOP_SRCDIR/testsuite/e2e')
import ustack_check as u
truths = [l.split()[1:] for l in open('$T_TMP/c200.prog') if l.startswith('truth:')]
st = [u.stacks(c)[0] for c in open('$T_TMP/c200.out').read().split('==\\n') if c.strip()]
bad = [i for i, s in enumerate(st) if i >= len(truths) or
       [f['pc'] for f in s[1:]] != [int(x, 16) for x in truths[i]][2:] or any(f['inexact'] for f in s)]
ok = len(st) == 200 and len(truths) == 200 and not bad
ok or print('%d stacks, %d truths, %d differ from libunwind (first: %s)' % (len(st), len(truths), len(bad), bad[:1]))
sys.exit(0 if ok else 1)"

# Tables are cached on disk by build-id: a second run reads them instead of compiling, and the
# stacks are the same (truth: libunwind's frames, as above).
TC="$T_TMP/tcache"
t "table cache: first run compiles and stores every table" 0 '' '' -- bash -c "
  XDG_CACHE_HOME='$TC' '$UKSTAP' -v -o '$T_TMP/tc1.out' -d '$P' --ldd -e '$GETPPID' -c '$P chain' > '$T_TMP/tc1.prog' 2> '$T_TMP/tc1.err' &&
  grep -q 'unwind tables: .* [1-9][0-9]* compiled + 0 from the cache' '$T_TMP/tc1.err' &&
  [ \$(find '$TC/ukstap/cfi' -name '*.cfi' | wc -l) -ge 3 ] || { cat '$T_TMP/tc1.err'; exit 1; }"
t "table cache: second run reads them all, stack = libunwind's" 0 '' '' -- bash -c "
  XDG_CACHE_HOME='$TC' '$UKSTAP' -v -o '$T_TMP/tc2.out' -d '$P' --ldd -e '$GETPPID' -c '$P chain' > '$T_TMP/tc2.prog' 2> '$T_TMP/tc2.err' &&
  grep -q 'unwind tables: .* 0 compiled + [1-9][0-9]* from the cache' '$T_TMP/tc2.err' &&
  $CHECK exact '$T_TMP/tc2.out' '$T_TMP/tc2.prog' || { cat '$T_TMP/tc2.err'; exit 1; }"

# C++ (-O2 -fomit-frame-pointer): a virtual call, a template chain and a std::function lambda;
# a std::thread (libstdc++'s trampoline); exceptions in flight: a destructor run by the landing
# pad, and std::terminate called by the personality routine inside libgcc_s's
# _Unwind_RaiseException (__cxa_throw and the unwinder on the stack).
X="$T_TMP/ustack_cxx"
if t_build "the C++ test program" g++ -O2 -g -fomit-frame-pointer -o "$X" "$PROGS/ustack_cxx.cpp" -ldl -lpthread; then
  for m in virtual thread cleanup terminate; do
    # --no-demangle: the truths (libunwind, readelf) name the frames as the ELF symbol table does.
    runp "C++ $m: run" "$T_TMP/cxx_$m.prog" "$UKSTAP" --no-demangle -o "$T_TMP/cxx_$m.out" -e "$GETPPID" -c "$X $m"
    t "C++ $m: every frame = libunwind's" 0 '' '' -- $CHECK exact "$T_TMP/cxx_$m.out" "$T_TMP/cxx_$m.prog"
  done
  t "C++ virtual: symbols = readelf's" 0 '' '' -- \
    $CHECK chain "$T_TMP/cxx_virtual.out" "$T_TMP/cxx_virtual.prog" "$X" _Z4leafi main
  t "C++ terminate: __cxa_throw and _Unwind_RaiseException (libgcc_s) are on the stack" 0 '' '' -- bash -c "
    grep -q ' : __cxa_throw+0x' '$T_TMP/cxx_terminate.out' &&
    grep -q ' : _Unwind_RaiseException+0x.*libgcc_s' '$T_TMP/cxx_terminate.out'"
fi
t_done
