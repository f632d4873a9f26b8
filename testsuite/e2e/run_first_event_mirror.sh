#!/bin/bash
# A program's first event, before ukstap can have written its VMA mirror: the kernel's walk finds
# the program's files itself (bpf_find_vma, then the table by inode: stp_cfi_inodes) and is
# whole. The -c command stops ukstap, waits until it has stopped, then execs the program
# (progs/first_event_stop.sh), so the event surely comes first. The program runs from an overlay
# mount, where stat() of a path names overlayfs's device and the mapping's file is the layer's
# own inode: the inode map was keyed by stat() and missed every preloaded file there (the 6.1
# test bed's root is such an overlay: run_demangle's first getppid had no ustack(1)); the loader
# now registers the inode the kernel names for its own mapping of each file
# (loader/kernel_inode.h). The old tree stopped after 2 of 8 frames here, every run.
#
# Truth: gdb's stack at the same getppid of the same binary (gdb_syscall_stacks.py: every pc;
# both with ASLR off).
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
E="$UKSTAP_TOP_SRCDIR/testsuite/e2e"
mkdir -p "$T_TMP/low" "$T_TMP/rw" "$T_TMP/mnt"
t_build first_event_prog gcc -O2 -o "$T_TMP/low/first_event_prog" "$E/progs/first_event_prog.c" ||
  { t_done; exit; }
X="$T_TMP/mnt/first_event_prog"
# on_overlay CMD...: CMD in a mount namespace of its own where $T_TMP/mnt is an overlay of
# $T_TMP/low (upper layer: a tmpfs); gone with CMD.
on_overlay() {
  unshare -m --propagation private sh -c '
    mount -t tmpfs tmpfs "$0/rw" && mkdir "$0/rw/up" "$0/rw/work" &&
    mount -t overlay overlay -o "lowerdir=$0/low,upperdir=$0/rw/up,workdir=$0/rw/work" "$0/mnt" &&
    exec "$@"' "$T_TMP" "$@"
}

t "the test bed: stat() through the overlay names another device than the file's own" 0 '' '' -- \
  on_overlay sh -c '[ "$(stat -c %d "$0/mnt/first_event_prog")" != "$(stat -c %d "$0/low/first_event_prog")" ]' "$T_TMP"
t "gdb: the stack at the program's getppid" 0 '' '' -- on_overlay env SYSCALL=getppid \
  bash -c 'gdb -batch -x "$0/gdb_syscall_stacks.py" --args "$1" > "$2" 2>&1' "$E" "$X" "$T_TMP/gdb.out"
# The shell's own getppid (its $PPID) comes first, under the same pid: the program's is the last.
S='probe syscall.getppid { if (pid() == target()) println("H ", ubacktrace()) }'
# The program's table is preloaded (-d; libc's too, --ldd): what the first event lacks is the
# mirror, never a table. A failure before the program continues ukstap would leave it stopped:
# the whole run is bounded.
t "first event with ukstap stopped: run (no stack cut short)" 0 '' '' -- on_overlay timeout -s KILL 300 \
  setarch -R "$UKSTAP" -o "$T_TMP/uk.out" -d "$X" --ldd -c "sh $E/progs/first_event_stop.sh $X cont" -e "$S"
# same_as_gdb UK_OUT whole|prefix: the last `H` line's pcs against gdb's first STACK (5 frames at
# least): all of them, or a non-empty prefix of them (a walk that stopped, never a wrong frame).
SAME_AS_GDB='
import sys
gdb = [l.split()[1:] for l in open(sys.argv[1]) if l.startswith("STACK ")]
uk = [l.split()[1:] for l in open(sys.argv[2]) if l.startswith("H ")]
want = [int(x, 16) for x in gdb[0]] if gdb else None
got = [int(x, 16) for x in uk[-1]] if uk else None
whole = sys.argv[3] == "whole"
ok = want and len(want) >= 5 and got and (got == want if whole else got == want[:len(got)])
if not ok:
    sys.exit("gdb:     %s\nukstap:  %s" % (" ".join(map(hex, want or [])), " ".join(map(hex, got or []))))
'
same_as_gdb() { python3 -c "$SAME_AS_GDB" "$T_TMP/gdb.out" "$1" "$2"; }
t "first event: ubacktrace() is gdb's stack, every pc" 0 '' '' -- same_as_gdb "$T_TMP/uk.out" whole

# A kernel whose verifier refuses stp_cfi_inode_prog (-D STP_TEST_REFUSE_INODE_PROG makes it load
# through a scalar) loses the kernel's inode keys, not the module: ukstap loads again without it
# and keys files by stat(), which is the mapping's inode off an overlay (the program's lower
# path here: no stacked filesystem), so the same first event is still whole (gdb's pcs: ASLR
# off, same binary and libraries). -v names the refusal and counts the files keyed by stat().
LOW="$T_TMP/low/first_event_prog"
t "inode program refused: the module still loads and runs (-v says so)" 0 '' \
  "~the kernel refused stp_cfi_inode_prog.*loading the module without it" -- timeout -s KILL 300 \
  setarch -R "$UKSTAP" -v -D STP_TEST_REFUSE_INODE_PROG=1 -o "$T_TMP/uk2.out" -d "$LOW" --ldd \
  -c "sh $E/progs/first_event_stop.sh $LOW cont" -e "$S"
cp "$T_TMP/err" "$T_TMP/uk2.err"
t "inode program refused: -v counts the files keyed by stat()" 0 '' '' -- \
  grep -Eq "^User stacks: [1-9][0-9]* file\(s\) keyed by stat\(\)'s inode, not the kernel's \(0 with the mmap lock busy, [1-9][0-9]* not asked" "$T_TMP/uk2.err"
# Where the lower path or libc is itself on an overlay (the 6.1 test bed's root), stat() misses
# there too: the walk stops where it has no table, so the stack is a prefix of gdb's (never a
# frame gdb does not have), the program's getppid frame at least.
pcs=whole
for f in "$LOW" "$(ldd "$LOW" | awk '/libc\.so/ {print $3}')"; do
  [ "$(stat -f -c %T "$f" 2> /dev/null)" = overlayfs ] && pcs=prefix
done
t "inode program refused: ubacktrace() off the overlay is gdb's stack, $([ $pcs = whole ] && echo 'every pc' || echo 'a prefix of its pcs (this root is an overlay)')" 0 '' '' -- \
  same_as_gdb "$T_TMP/uk2.out" $pcs
t_done
