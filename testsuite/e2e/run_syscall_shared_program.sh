#!/bin/bash
# Syscall probes with the same code run as one BPF program (codegen/shared_programs.h): the
# dispatcher's prog array holds it at every number, and it finds which probe runs from the
# syscall number. `probe syscall.*, syscall.*.return` with one body is then two programs, and
# pp() must still be the probe of the syscall that ran. Truth: strace -c's count of each system
# call of the same command (run under ukstap -c, counted by ukstap in strace's child after its
# exec, so execve's entry is strace's and its return cat's).
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

script='global c, names
probe syscall.*, syscall.*.return { if (ppid() == target() && execname() == "cat") c[pp()]++ }
probe syscall.* { if (ppid() == target() && execname() == "cat") names[name]++ }
probe end {
  foreach (k+ in c) printf("%s %d\n", k, c[k])
  foreach (k+ in names) printf("name %s %d\n", k, names[k])
}'
missing=/nonexistent-ukstap-shared-program-$$
"$UKSTAP" -e "$script" -c "strace -qq -c -o $T_TMP/strace.out -e signal=none cat /etc/hostname $missing" \
  > "$T_TMP/run.out" 2> "$T_TMP/run.err"
rc=$?
t shared_program_run 0 '' '' -- bash -c "[ $rc = 1 ] && ! grep -Ev '^(cat: $missing: No such file or directory|WARNING: Child process exited with status 1)\$' '$T_TMP/run.err' >&2"
# strace -c's table: "% time seconds usecs/call calls [errors] syscall".
strace_counts=$(awk '$1 ~ /^[0-9.]+$/ && $NF != "total" { print $NF, $4 }' "$T_TMP/strace.out" | sort)
enter=$(sed -nE 's/^kernel\.trace\("syscalls:sys_enter_([a-z0-9_]+)"\) ([0-9]+)$/\1 \2/p' "$T_TMP/run.out" | sort)
exit=$(sed -nE 's/^kernel\.trace\("syscalls:sys_exit_([a-z0-9_]+)"\) ([0-9]+)$/\1 \2/p' "$T_TMP/run.out" | sort)
# Returns: every call strace counted (exit_group does not return, and strace leaves it out).
t shared_program_returns_as_strace 0 "$strace_counts"$'\n' '' -- printf '%s\n' "$exit"
# Entries: the same but execve's (made by strace's child before it was cat), and exit_group once.
t shared_program_entries_as_strace 0 "$(printf '%s\nexit_group 1\n' "$(grep -v '^execve ' <<< "$strace_counts")" | sort)"$'\n' '' \
  -- printf '%s\n' "$enter"
# The aliases' `name` differs in each probe: a table by number in the one program. Where it is
# the kernel's name of the call (openat, read, close, ...: not pread for pread64, mmap2 for mmap), its
# count is strace's.
t shared_program_names_as_strace 0 '' '' -- bash -c "
  join <(sed -nE 's/^name ([a-z0-9_]+) ([0-9]+)\$/\1 \2/p' '$T_TMP/run.out' | sort) <(grep -v '^execve ' <<< '$strace_counts') > '$T_TMP/names' &&
  grep -qx 'openat \([0-9]*\) \1' '$T_TMP/names' && grep -qx 'close \([0-9]*\) \1' '$T_TMP/names' &&
  grep -qx 'read \([0-9]*\) \1' '$T_TMP/names' && awk '\$2 != \$3 { print; bad = 1 } END { exit bad }' '$T_TMP/names' >&2"
# Sanity of the truth: cat made its usual calls.
t shared_program_strace_saw_cat 0 '' '' -- bash -c "grep -qx 'openat [0-9]*' <<< '$strace_counts' && grep -qx 'close [0-9]*' <<< '$strace_counts'"
# One program per direction and dispatcher slot (entry: c[pp()] and names[name], two slots;
# return: one): pass 3's C has one table of probes by number for each, the other handlers
# written nowhere.
"$UKSTAP" -p3 -e "$script" > "$T_TMP/p3.c" 2> /dev/null
t shared_program_p3_three_programs 0 $'3\n3\n' '' -- bash -c "grep -c '^STP_PROBE_SYSCALL(' '$T_TMP/p3.c'; grep -c 'STP_SYSCALL_SHARED_PROBE(c, ' '$T_TMP/p3.c'"
t_done
