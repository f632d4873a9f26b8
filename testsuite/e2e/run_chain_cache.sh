#!/bin/bash
# The caller-chain cache (runtime/bpf/stp_bpf_uwalk_chain.h): walks from the same leaf (pc, sp,
# registers) whose caller chains differ higher up the stack, interleaved, each event's stack
# and each ustack_id() key's stack and count as the program saw them. Truth: the program's own
# sequence of paths and libunwind's stack of each (progs/chain_cache_prog.c). Each event walks
# twice (ustack_id(), then print_ubacktrace(): the second from the cache). Root only; under
# CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
P="$T_TMP/chain_cache_prog"
t_build "the test program" gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -fno-ipa-icf -o "$P" \
  "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/chain_cache_prog.c" -lunwind || { t_done; exit; }
S='
global s
probe syscall.getppid {
  if (pid() == target()) {
    s[ustack_id()] <<< 1
    printf("E\n")
    print_ubacktrace()
  }
}
probe end { foreach (k in s) { printf("T %d\n", @count(s[k])); print_ustack_id(k) } }'
t "run" 0 '*' '' -- "$UKSTAP" -o "$T_TMP/stacks.out" -e "$S" -c "$P $T_TMP/prog.out"
t "each event's stack and each ustack_id() key = the program's path and libunwind's stack" \
  0 '' '' -- python3 "$UKSTAP_TOP_SRCDIR/testsuite/e2e/chain_cache_check.py" "$T_TMP/stacks.out" \
  "$T_TMP/prog.out"
# The cache trusts an entry while the mirror's epoch is unchanged; the kernel's add to the epoch
# after it deletes a mirror at exec must be ordered after the delete (bpf/stp_bpf_vma_mirror.h):
# the fetch form of the atomic add (fully ordered), not BPF_ADD without fetch (unordered: a
# relaxed add on arm64). Truth: llvm-objdump's reading of the object pass 4 made (from the cache).
OBJDUMP=$(command -v llvm-objdump-14 || command -v llvm-objdump)
t "the exec hook's epoch add is the ordered (fetch) form (llvm-objdump)" 0 '~atomic_fetch_add' '' -- bash -c "
  o=\$('$UKSTAP' -p4 -e '$S' -c true) && '$OBJDUMP' -d --section=raw_tp/sched_process_exec \"\$o\" |
    grep -E 'atomic|lock '"

# A hit whose id is not stored yet (ustack_id() after the same stack was streamed) with another
# stack walked in between on the same CPU (pinned): the stored stack must be the hit's pcs,
# which stay in the cache entry until then (stp__chain_pcs), never the context's last walk's.
S='
global s, ev
probe syscall.getppid {
  if (pid() == target()) {
    if (ev++ % 5 < 2) { printf("E\n"); print_ubacktrace() }
    else s[ustack_id()] <<< 1
  }
}
probe syscall.getpid { if (pid() == target()) { printf("B\n"); print_ubacktrace() } }
probe end { foreach (k in s) { printf("T %d\n", @count(s[k])); print_ustack_id(k) } }'
t "lazy run" 0 '*' '' -- "$UKSTAP" $CHAIN_EXTRA -d "$P" --ldd -o "$T_TMP/lazy.out" -e "$S" \
  -c "taskset -c 0 $P $T_TMP/lazy_prog.out lazy"
t "a hit's stored stack (its pcs left in the cache) = the program's path and libunwind's stack" \
  0 '' '' -- python3 "$UKSTAP_TOP_SRCDIR/testsuite/e2e/chain_cache_check.py" "$T_TMP/lazy.out" \
  "$T_TMP/lazy_prog.out"
t_done
