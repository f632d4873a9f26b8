#!/bin/bash
# syscall.send / syscall.recv (tapsets/syscalls/socketcall.stp): they resolve on every kernel;
# where the kernel has no send/recv syscall (no syscalls:sys_enter_send in tracefs: x86_64) they
# never fire, and libc's send()/recv() are seen as sendto/recvfrom. Truth: strace's record of
# the same program (which syscalls it makes and their lengths).
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

prog="import socket; a, b = socket.socketpair(); a.send(b'hello'); b.recv(64)"
ev=/sys/kernel/tracing/events/syscalls
[ -d "$ev" ] || ev=/sys/kernel/debug/tracing/events/syscalls

# What strace sees: "sendto 5" / "recvfrom 64" (name and length argument), or send/recv.
expected=$(strace -f -qq -e trace=send,sendto,recv,recvfrom python3 -c "$prog" 2>&1 >/dev/null |
  sed -nE 's/^(\[pid +[0-9]+\] )?(send|sendto|recv|recvfrom)\([0-9]+, "[^"]*", ([0-9]+),.*/\2 \3/p')
t send_recv_tracepoints_absent 0 '' '' -- \
  bash -c "[ -d $ev ] && ! [ -e $ev/sys_enter_send ] && ! [ -e $ev/sys_enter_recv ]"
t send_recv_as_sendto_recvfrom 0 "$expected"$'\n' '' -- "$UKSTAP" -e '
probe syscall.send, syscall.sendto, syscall.recv, syscall.recvfrom {
  if (pid() == target()) printf("%s %d\n", name, len)
}
probe syscall.send.return, syscall.recv.return { if (pid() == target()) println("never") }' \
  -c "python3 -c \"$prog\""
t_done
