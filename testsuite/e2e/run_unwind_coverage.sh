#!/bin/bash
# Unwinder coverage (issue 15): code whose CFI is only in a compressed .debug_frame (ld
# --compress-debug-sections, Go's linker), one table for every path of the same content (a copy
# and a hard link), -v's stop reasons, and a #! script given to -c.
#
# Truth: gdb's unwind of the same program at the same syscall (gdb_syscall_stacks.py; gdb runs
# it with ASLR off, ukstap runs under `setarch -R`, so the pcs compare as numbers), compared
# frame for frame by unwind_coverage_check.py, which also holds -v's "end of stack" count to the
# number of stacks equal to gdb's. readelf says which sections are compressed. Root only; under
# CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_TMP/cache"  # every table compiled here, none from an older cache
E2E="$UKSTAP_TOP_SRCDIR/testsuite/e2e"
CHECK="python3 $E2E/unwind_coverage_check.py"
cd "$T_TMP" || exit 1

# The program: leaf() calls getppid() N times through mid() and top(); with a second argument
# it then runs that path (another name of this program) and waits for it.
cat > covprog.c <<'C'
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
__attribute__((noinline)) long leaf(int n) { return getppid() + n; }
__attribute__((noinline)) long mid(int n) { long r = 0; for (int i = 0; i < n; i++) r += leaf(i); return r; }
__attribute__((noinline)) long top(int n) { return mid(n) * 2; }
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2;
  long r = top(n);
  if (argc > 2) {
    pid_t p = fork();
    if (p == 0) { execl(argv[2], argv[2], argv[1], (char *)0); _exit(127); }
    int st;
    waitpid(p, &st, 0);
  }
  return r == 42;
}
C
cat > covgo.go <<'GO'
package main

import "syscall"

//go:noinline
func leaf(n int) int { return syscall.Getppid() + n }

//go:noinline
func mid(n int) int { r := 0; for i := 0; i < n; i++ { r += leaf(i) }; return r }

//go:noinline
func top(n int) int { return mid(n) * 2 }

func main() { if top(2) == 42 { println("42") } }
GO
# Without asynchronous unwind tables gcc puts the program's CFI in .debug_frame only (crt1's
# _start keeps its .eh_frame), which the linker compresses.
t_build "the test programs" gcc -O2 -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-optimize-sibling-calls -g \
       -Wl,--compress-debug-sections=zlib -o covprog covprog.c &&
  t_build "the test programs" env GOCACHE="$T_TMP/gocache" GOPATH="$T_TMP/gopath" GO111MODULE=off GOFLAGS= \
       go build -o covgo covgo.go || { t_done; exit; }
compressed_debug_frame() { readelf -SW "$1" | grep -Eq '\.debug_frame +PROGBITS +[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ [0-9a-f]+ +[A-Z]*C'; }
t "covprog: its .debug_frame is SHF_COMPRESSED (readelf's C flag)" 0 '' '' -- compressed_debug_frame covprog
t "covgo: its .debug_frame is SHF_COMPRESSED (readelf's C flag)" 0 '' '' -- compressed_debug_frame covgo
cp covprog covprog-copy         # another inode, the same content
ln covprog covprog-link         # the same inode, another path
objcopy --remove-section .debug_frame covprog covprog-nocfi  # the same code, no CFI at all
printf '#!/bin/sh\nexec ./covprog 2\n' > cov.sh && chmod +x cov.sh

# gdb's stacks: ASLR off places covprog and its copy at the same addresses (and covprog-nocfi,
# whose code is covprog's, byte for byte).
SYSCALL=getppid timeout 120 gdb -batch -x "$E2E/gdb_syscall_stacks.py" --args ./covprog 2 > gdb-c.out 2>&1
SYSCALL=getppid timeout 120 gdb -batch -x "$E2E/gdb_syscall_stacks.py" --args ./covgo > gdb-go.out 2>&1

# The test's programs only (the script's /bin/sh calls getppid too), in the target's tree.
SCRIPT='probe syscall.getppid {
  if ((pid() == target() || ppid() == target()) && execname() =~ "^cov(prog|go)") {
    printf("--- %d\n", pid()); print_ubacktrace()
  }
}'
run() {  # run NAME UKSTAP-ARGS...: -v run under setarch -R, stdout in NAME.out, stderr in NAME.err
  local name=$1; shift
  setarch -R "$UKSTAP" -v -e "$SCRIPT" "$@" > "$name.out" 2> "$name.err"
}

# --- 1. compressed .debug_frame: C and Go stacks equal gdb's ---------------------------------
run c -c './covprog 3'
t "compressed C: every stack = gdb's, end of stack = complete" 0 '' '' -- \
  $CHECK c.out c.err gdb-c.out --all-complete 3
FDES=$(readelf --debug-dump=frames covprog | grep -c ' FDE ')
t "compressed C: the table has every FDE readelf lists (.eh_frame + decompressed .debug_frame)" 0 '' '' -- \
  grep -Eq "^Pass 5: \./covprog: [0-9]+ rows, 100\.00% expressible, $FDES FDEs\$" c.err
run go -c ./covgo
t "Go: every stack = gdb's (syscall.Getppid's caller kept), end of stack = complete" 0 '' '' -- \
  $CHECK go.out go.err gdb-go.out --all-complete 2
t "Go: no 'no unwind table' warning, no frame-pointer frames" 0 '' '' -- \
  bash -c "! grep -Eq 'no unwind table|found by frame pointers' go.err"

# --- 2. a copy and a hard link run together: one table, both unwind fully ---------------------
run twins -d ./covprog-link -c './covprog-copy 2 ./covprog-link'
t "copy + hard link: every stack of both = gdb's" 0 '' '' -- \
  $CHECK twins.out twins.err gdb-c.out --all-complete 4
t "copy + hard link: both processes printed stacks" 0 '' '' -- \
  bash -c "[ \$(grep '^--- ' twins.out | sort -u | wc -l) = 2 ]"
t "copy + hard link: one table compiled, the other file shares it" 0 '' '' -- \
  bash -c "[ \$(grep -Ec '^Pass 5: \S*covprog-(copy|link): [0-9]+ rows' twins.err) = 1 ] &&
           grep -Eq '^Pass 5: \S*covprog-(copy|link): the table of \S*covprog-(copy|link) \(same content\)$' twins.err"

# --- 3. stop reasons: a walk through code without CFI never says "end of stack" -------------
# covprog-nocfi's code has no table: the walk falls back to frame pointers in leaf(), whose rbp
# is not a frame pointer, and stops early. gdb (covprog's CFI, the same code) shows how deep the
# stack is; "end of stack" must count only stacks that reach its end.
run nocfi -c './covprog-nocfi 2'
t "no CFI: stacks printed, cut short (fewer frames than gdb's)" 0 '' '' -- \
  bash -c "grep -q '^--- ' nocfi.out && ! $CHECK nocfi.out nocfi.err gdb-c.out --all-complete 1 > /dev/null"
t "no CFI: end of stack = complete stacks (0), the reasons add up to the stacks" 0 '' '' -- \
  $CHECK nocfi.out nocfi.err gdb-c.out
t "no CFI: each of those stacks (gdb's are deeper) ends with '<user stack cut short: REASON>'" 0 '' '' -- \
  bash -c "[ \$(grep -c '^--- ' nocfi.out) = \$(grep -c '^<user stack cut short: [a-z ()-]*>\$' nocfi.out) ]"

# --- 4. a #! script as -c: nothing said about it, its exec'd program unwinds fully ------------
run script -d ./covprog --ldd -c ./cov.sh
t "script as -c: no line about cov.sh on stderr" 0 '' '' -- bash -c "! grep -n 'cov\.sh' script.err"
t "script as -c: the program it execs: every stack = gdb's" 0 '' '' -- \
  $CHECK script.out script.err gdb-c.out --all-complete 2
t_done
