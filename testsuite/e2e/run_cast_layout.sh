#!/bin/bash
# sizeof/offsetof through @cast of a null pointer (passes/cast_layout.h), in a begin probe: a
# header module's type (SystemTap's "<stdio.h>" modules) and a kernel type. Truths: a C program
# compiled here prints sizeof(FILE) and offsetof(struct timeval, tv_usec and tv_sec); bpftool prints the
# kernel's BTF size of task_struct.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

cat > "$T_TMP/l.c" <<'C'
#include <stddef.h>
#include <stdio.h>
#include <sys/time.h>
int main(void) {
  printf("%zu %zu %zu\n", sizeof(FILE), offsetof(struct timeval, tv_usec), offsetof(struct timeval, tv_sec));
  return 0;
}
C
cc -o "$T_TMP/l" "$T_TMP/l.c"
want=$("$T_TMP/l")
# (tv_sec: offset 0, which the compiler writes as `.zero 8`, not as a .quad)
t cast_layout_header 0 "$want"$'\n' '' -- "$UKSTAP" -e 'probe begin {
  printf("%d %d %d\n", @cast_module_sizeof("</usr/include/stdio.h>", "FILE"),
         &@cast(0, "struct timeval", "<sys/time.h>")->tv_usec,
         &@cast(0, "struct timeval", "<sys/time.h>")->tv_sec)
  exit()
}'

size=$(bpftool btf dump file /sys/kernel/btf/vmlinux format raw |
  sed -nE "s/^\[[0-9]+\] STRUCT 'task_struct' size=([0-9]+) .*/\1/p")
t cast_layout_kernel_sizeof 0 "$size $((3 * size))"$'\n' '' -- "$UKSTAP" -e 'probe begin {
  printf("%d %d\n", @cast_sizeof("task_struct"), &@cast(0, "task_struct", "kernel")[3])
  exit()
}'

t cast_layout_unknown_type 1 '' '~the C compiler \(cc\) finds no type nosuch_t in <stdio.h>' -- \
  "$UKSTAP" -e 'probe begin { println(@cast_module_sizeof("<stdio.h>", "nosuch_t")); exit() }'
# Reading memory through a header type is still not possible (no user-space types in BPF).
t cast_layout_header_read 1 '' '~only kernel types \(from BTF\) are supported' -- \
  "$UKSTAP" -e 'probe begin { println(@cast(1234, "FILE", "<stdio.h>")->_flags); exit() }'
t_done
