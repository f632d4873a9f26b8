#!/bin/bash
# syscall_vars: the syscall aliases' SystemTap-named variables (and argstr where SystemTap's
# layout equals strace's) against strace -ff of the same run, call by call.
#
# testsuite/e2e/progs/sysvars_work.c issues 34 kinds of system calls with known arguments
# (openat with flags, write, writev, read, pread, lseek, dup/dup3, access, faccessat, unlinkat,
# mkdirat, umask, mmap, mprotect, madvise, munmap, getrandom, futex, socketpair, sendto,
# recvfrom, poll, socket, connect (AF_INET), nanosleep, clock_nanosleep, prlimit64,
# fork → clone, kill, wait4, exit_group, close, fcntl).
# ukstap runs `strace -ff -o DIR/st ./sysvars_work` under -c; the script prints, for each call
# of the program (execname filter), SYSCALL, tid and the variables by SystemTap's names.
# syscall_vars_check.py pairs the N-th call of a syscall in a tid with strace's N-th and
# compares each variable with strace's rendering of the same argument (flags as sets,
# numbers by value, AF_ as PF_). strace is the independent truth; nothing here is produced by
# the code under test.
set -u
. "$(dirname "$0")/../e2e-lib.sh"

if ! command -v strace >/dev/null || ! command -v cc >/dev/null; then
  if [ "${CI:-}" = true ]; then echo "FAIL: strace and cc are needed"; exit 1; fi
  echo "SKIP: syscall_vars needs strace and cc"; exit 77
fi

cc -O1 -o "$T_TMP/sysvars_work" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/sysvars_work.c" || exit 1
mkdir -p "$T_TMP/st" "$T_TMP/scratch"

cat > "$T_TMP/vars.stp" <<'EOF'
function me() { return execname() == "sysvars_work" }
function out(n, s) { printf("%s\t%d\t%s\n", n, tid(), s) }
# argstr on a line of its own: a printf of several long strings is cut at 128 bytes (reported).
function outa(n, a) { printf("%s\t%d\t+argstr=%s\n", n, tid(), a) }
function outv(n, k, v) { printf("%s\t%d\t+%s=%s\n", n, tid(), k, v) }
probe syscall.openat { if (me()) out(name, sprintf("dfd_str=%s\tfilename=%s\tflags_str=%s\tmode=%d", dfd_str, filename, flags_str, mode)); if (me()) outa(name, argstr) }
probe syscall.write { if (me()) out(name, sprintf("fd=%d\tbuf_str=%s\tcount=%d", fd, buf_str, count)) }
probe syscall.writev { if (me()) out(name, sprintf("fd=%d\tcount=%d", fd, count)) }
probe syscall.read { if (me()) out(name, sprintf("fd=%d\tcount=%d", fd, count)) }
probe syscall.pread { if (me()) out(name, sprintf("fd=%d\tcount=%d\toffset=%d", fd, count, offset)) }
probe syscall.lseek { if (me()) out(name, sprintf("fildes=%d\toffset=%d\twhence_str=%s", fildes, offset, whence_str)); if (me()) outa(name, argstr) }
probe syscall.close { if (me()) out(name, sprintf("fd=%d", fd)); if (me()) outa(name, argstr) }
probe syscall.dup { if (me()) out(name, sprintf("oldfd=%d", oldfd)); if (me()) outa(name, argstr) }
probe syscall.dup3 { if (me()) out(name, sprintf("oldfd=%d\tnewfd=%d\tflags_str=%s", oldfd, newfd, flags_str)); if (me()) outa(name, argstr) }
probe syscall.fcntl { if (me()) out(name, sprintf("fd=%d\tcmd=%d\tcmd_str=%s", fd, cmd, cmd_str)) }
probe syscall.madvise { if (me()) out(name, sprintf("start=%d\tlength=%d\tadvice_str=%s", start, length, advice_str)); if (me()) outa(name, argstr) }
probe syscall.getrandom { if (me()) out(name, sprintf("count=%d\tflags_str=%s", count, flags_str)) }
probe syscall.access { if (me()) out(name, sprintf("pathname=%s\tmode_str=%s", pathname, mode_str)); if (me()) outa(name, argstr) }
probe syscall.faccessat { if (me()) out(name, sprintf("dirfd_str=%s\tpathname=%s\tmode_str=%s", dirfd_str, pathname, mode_str)); if (me()) outa(name, argstr) }
probe syscall.unlinkat { if (me()) out(name, sprintf("dfd_str=%s\tpathname_str=%s\tflag_str=%s", dfd_str, pathname_str, flag_str)) }
probe syscall.mkdirat { if (me()) out(name, sprintf("dirfd_str=%s\tpathname=%s\tmode=%d", dirfd_str, pathname, mode)); if (me()) outa(name, argstr) }
probe syscall.umask { if (me()) out(name, sprintf("mask=%d", mask)); if (me()) outa(name, argstr) }
probe syscall.mmap2 { if (me()) { out(name, sprintf("start=%d\tlength=%d\tprot_str=%s\tflags_str=%s", start, length, prot_str, flags_str)); outv(name, "fd", sprint(fd)); outv(name, "pgoffset", sprint(pgoffset)) } }
probe syscall.mprotect { if (me()) out(name, sprintf("addr=%d\tlen=%d\tprot_str=%s", addr, len, prot_str)) }
probe syscall.munmap { if (me()) out(name, sprintf("start=%d\tlength=%d", start, length)) }
probe syscall.futex { if (me()) out(name, sprintf("futex_uaddr=%d\top=%d\tval=%d", futex_uaddr, op, val)); if (me()) outa(name, argstr) }
probe syscall.socketpair { if (me()) out(name, sprintf("family_str=%s\ttype_str=%s\tprotocol=%d", family_str, type_str, protocol)) }
probe syscall.sendto { if (me()) out(name, sprintf("s=%d\tbuf=%s\tlen=%d\tflags_str=%s\tto_uaddr=%d\ttolen=%d", s, buf, len, flags_str, to_uaddr, tolen)) }
probe syscall.recvfrom { if (me()) out(name, sprintf("s=%d\tlen=%d\tflags_str=%s\taddr_uaddr=%d\taddrlen_uaddr=%d", s, len, flags_str, addr_uaddr, addrlen_uaddr)) }
probe syscall.poll { if (me()) out(name, sprintf("nfds=%d\ttimeout=%d", nfds, timeout)) }
probe syscall.socket { if (me()) out(name, sprintf("family_str=%s\ttype_str=%s\tprotocol=%d", family_str, type_str, protocol)) }
probe syscall.connect { if (me()) out(name, sprintf("sockfd=%d\tuaddr_af=%s\tuaddr_ip=%s\tuaddr_ip_port=%s\taddrlen=%d", sockfd, uaddr_af, uaddr_ip, uaddr_ip_port, addrlen)) }
probe syscall.nanosleep { if (me()) out(name, sprintf("req_str=%s\trem_uaddr=%d", req_str, rem_uaddr)); if (me()) outa(name, argstr) }
probe syscall.clock_nanosleep { if (me()) out(name, sprintf("clk_id_str=%s\tflags=%d\treq_str=%s\trem_uaddr=%d", clk_id_str, flags, req_str, rem_uaddr)); if (me()) outa(name, argstr) }
probe syscall.prlimit64 { if (me()) out(name, sprintf("pid=%d\tresource_str=%s\tnew_rlim_uaddr=%d", pid, resource_str, new_rlim_uaddr)) }
probe syscall.clone { if (me()) out(name, sprintf("clone_flags_str=%s\tstack_start=%d\tchild_tid_uaddr=%d", __sysc_fork_flags(clone_flags), stack_start, child_tid_uaddr)) }
probe nd_syscall.kill { if (me()) out(name, sprintf("pid=%d\tsig=%d\tsig_name=%s", pid, sig, sig_name)); if (me()) outa(name, argstr) }
probe syscall.wait4 { if (me()) out(name, sprintf("pid=%d\toptions_str=%s\trusage_uaddr=%d", pid, options_str, rusage_uaddr)) }
probe nd_syscall.exit_group { if (me()) out(name, sprintf("status=%d", status)); if (me()) outa(name, argstr) }
EOF

t "syscall_vars: run under strace" 0 '*' '*' -- \
  "$UKSTAP" -o "$T_TMP/stap.out" "$T_TMP/vars.stp" \
  -c "strace -ff -qq -o $T_TMP/st/st -e trace=openat,write,writev,read,pread64,lseek,close,dup,dup3,fcntl,access,faccessat,unlinkat,mkdirat,umask,mmap,mprotect,madvise,munmap,getrandom,futex,socketpair,sendto,recvfrom,poll,socket,connect,nanosleep,clock_nanosleep,prlimit64,clone,kill,wait4,exit_group $T_TMP/sysvars_work $T_TMP/scratch"
t "syscall_vars: every variable equals strace's argument" 0 '~^OK: ' '' -- \
  python3 "$UKSTAP_TOP_SRCDIR/testsuite/e2e/syscall_vars_check.py" "$T_TMP/stap.out" "$T_TMP/st"
t_done
