#!/bin/bash
# Every loss is counted and shown at exit, without -v: here the VMA side-band records the
# kernel could not queue because ukstap was not reading (stopped). The truth is the workload:
# it makes M executable mappings while ukstap is stopped; the per-CPU side-band rings hold a
# few thousand records, so most of them must be reported lost.
# e2e-schedule: alone (run-e2e.sh): thousands of executable mappings load the machine.
source "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

M=20000
cat > "$T_TMP/mapper.c" <<'C'
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
  long n = atol(argv[1]);
  int fd = open("/bin/true", O_RDONLY);
  if (fd < 0) return 1;
  for (long i = 0; i < n; i++) {  /* each mmap is one PERF_RECORD_MMAP2 */
    void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) return 1;
    munmap(p, 4096);
  }
  return 0;
}
C
t_build "the workload" gcc -O2 -o "$T_TMP/mapper" "$T_TMP/mapper.c" || { t_done; exit; }

# A script that walks user stacks (so the VMA tracker runs) but never fires.
"$UKSTAP" -e 'probe kernel.trace("syscalls:sys_enter_getppid") { if (execname() == "no such process name") print_ubacktrace() }
              probe begin { warn("ready") }' > "$T_TMP/uk.out" 2> "$T_TMP/uk.err" &
pid=$!
for _ in $(seq 1200); do grep -q ready "$T_TMP/uk.err" && break; kill -0 $pid 2> /dev/null || break; sleep 0.1; done
t "ukstap started" 0 '' '' -- grep -q ready "$T_TMP/uk.err"
# All on CPU 0: the kernel writes its LOST record into the ring that lost, with the first
# record it can queue there once ukstap has read the ring again.
# The kernel writes its LOST record only with the first record it can queue once ukstap has
# read the full ring: the records after SIGCONT are made once ukstap is idle again (asleep in
# its event loop, twice 0.1 s apart: it has read what the ring held), and SIGTERM waits until it
# is idle after them. A fixed second of records (before) was over before a ukstap starved on a
# loaded machine (load 11) had drained the ring: no LOST record at all.
idle() {  # idle: ukstap is asleep in epoll_wait now and 0.1 s later
  local i
  for i in 1 2; do
    case $(cat /proc/$pid/wchan 2> /dev/null) in do_epoll_wait|ep_poll*) ;; *) return 1 ;; esac
    sleep 0.1
  done
}
wait_idle() { for _ in $(seq 600); do idle && return 0; sleep 0.1; done; echo "  ukstap never idle"; }
kill -STOP $pid
taskset -c 0 "$T_TMP/mapper" $M
kill -CONT $pid
wait_idle
for _ in $(seq 10); do taskset -c 0 /bin/true; sleep 0.1; done
wait_idle
kill -TERM $pid; wait $pid
t "exit status 0" 0 '' '' -- test $? = 0
lost=$(sed -n 's/^WARNING: Number of lost VMA side-band records: \([0-9]*\) .*/\1/p' "$T_TMP/uk.err")
echo "  lost side-band records reported: ${lost:-none} (of $M made while stopped)"
t "the lost side-band records are reported without -v" 0 '' '' -- test -n "$lost"
t "  ... most of the $M made while ukstap was stopped" 0 '' '' -- test "${lost:-0}" -ge $((M / 2))
t_done
