#!/bin/bash
# Several user-stack hooks in one probe verify on every kernel: print_ubacktrace() twice, then
# sprint_ubacktrace() and ubacktrace(). On Debian 12's 6.1 each print/sprint record left states
# its verifier did not merge, and the program was "too large" (over 1M instructions); the record
# code after the walk is one global function now (bpf/stp_bpf_ustack_records.h). Truth: one
# event has one stack: the two printed stacks are equal, and ubacktrace()'s hex list is their
# addresses, all of them: perl's and libc's tables are loaded before `-c` starts it, and the walk
# finds them by the inode the kernel maps (the 6.1 guest's overlayfs root gave a prefix here
# before: its stat() inodes were not the mapped ones, loader/kernel_inode.h). Root only; under
# CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
S='global n
  probe syscall.getppid { if (pid() == target() && !n++) {
    println("A"); print_ubacktrace(); println("B"); print_ubacktrace(); println("S")
    println(sprint_ubacktrace()); println("H ", ubacktrace()) } }'
t "print_ubacktrace() x2, sprint_ubacktrace(), ubacktrace() in one probe: run" 0 '' '' -- \
  bash -c '"$0" -c "perl -e getppid" -e "$1" > "$2"' "$UKSTAP" "$S" "$T_TMP/tw.out"
t "the two printed stacks are equal, and ubacktrace() is their addresses" 0 '' '' -- bash -c "
  a=\$(sed -n '/^A\$/,/^B\$/p' '$T_TMP/tw.out' | grep '^ 0x'); b=\$(sed -n '/^B\$/,/^S\$/p' '$T_TMP/tw.out' | grep '^ 0x')
  h=\$(sed -n 's/^H //p' '$T_TMP/tw.out'); addrs=\$(echo \"\$a\" | awk '{printf \"%s \", \$1}')
  [ -n \"\$a\" ] && [ \"\$a\" = \"\$b\" ] && [ \"\${h% }\" = \"\${addrs% }\" ] || { cat '$T_TMP/tw.out'; exit 1; }"
t_done
