#!/bin/bash
# Tapset functions in kernel-context (BPF) probes AND in begin (native) probes: the string,
# context, time, errno and syscall-helper functions, each called from one probe, so the probe
# must also pass the verifier with all of them at once.
#
# Expected values come from SystemTap's documented semantics (string.stp: substr's 0-based start,
# strpos -1 when absent, tokenize's sequence of non-empty tokens, strtol = the kernel's
# simple_strtol; docs/STAP-FORMATS.md §7 quoting and argstr rules, errno.stp's retstr), from the
# test program's own view of itself (testsuite/e2e/progs/fnprog.c prints getpid/gettid/getppid/
# getuid/getgid/geteuid/getegid/comm) and, for begin probes, from the shell that runs ukstap.
# Root only; under CI=true not being root is a failure, never a skip.
# e2e-schedule: first (run-e2e.sh): one of the longest scripts.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"

FP=$T_TMP/fnprog
t_build "the target program" gcc -O2 -Wall -o "$FP" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/fnprog.c" || { t_done; exit; }
MARK=$T_TMP/ukstap-fn-marker
printf 'x\n' > "$MARK"

# ---- the same body in both contexts: pure functions of their arguments -------------------------
cat > "$T_TMP/body.stp" <<'EOF'
  printf("strlen:%d %d %d\n", strlen("hello"), strlen(""), strlen("a\tb"))
  printf("substr:[%s][%s][%s][%s][%s][%s]\n", substr("hello", 0, 2), substr("hello", 1, 3),
         substr("hello", 3, 10), substr("hello", 5, 1), substr("hello", -1, 2), substr("hello", 1, 0))
  printf("strpos:%d %d %d %d %d\n", strpos("hello", "l"), strpos("hello", "lo"),
         strpos("hello", "x"), strpos("hello", ""), strpos("lo", "hello"))
  printf("isinstr:%d %d %d\n", isinstr("hello", "ell"), isinstr("hello", "elo"), isinstr("", "a"))
  printf("str_replace:[%s][%s][%s][%s][%s]\n", str_replace("a/b/c", "/", "_"),
         str_replace("aaa", "aa", "b"), str_replace("abc", "", "x"),
         str_replace("hello", "l", "LL"), str_replace("abab", "ab", ""))
  t1 = tokenize(" a  b,c ", " ,"); t2 = tokenize("", " ,"); t3 = tokenize("", " ,")
  t4 = tokenize("", " ,"); t5 = tokenize("x", " ,"); t6 = tokenize("", " ,")
  printf("tokenize:[%s][%s][%s][%s][%s][%s]\n", t1, t2, t3, t4, t5, t6)
  printf("strtol:%d %d %d %d %d %d %d %d %d\n", strtol("ff", 16), strtol("0x1A", 16),
         strtol("-42", 10), strtol("0755", 0), strtol("0x10", 0), strtol("101", 2),
         strtol("12abc", 10), strtol("19", 8), strtol("", 10))
  printf("sprint:%s|%s\n", sprint(-42), sprint("s"))
  printf("text_str:%s|%s\n", text_str("a\tb\n\"q\"\\"), text_str("\001x\177"))
  printf("text_strn:%s|%s|%s\n", text_strn("abc", 0, 1), text_strn("abcdefghij", 8, 1),
         text_strn("a\nb", 0, 0))
  printf("stringat:%d %d\n", stringat("abc", 1), stringat("abc", 0))
  try { stringat("abc", 3) } catch (e) { printf("stringat-err:%s\n", e) }
  printf("isdigit:%d %d %d\n", isdigit("7x"), isdigit("x7"), isdigit(""))
  printf("errno:%s|%s|%s|%s|%s\n", errno_str(2), return_str(1, -2), return_str(2, 255),
         return_str(1, -512), return_str(1, 3))
  # SystemTap's errno_str/errno_p take |err| (errno.stp: e = (e > 0 ? e : -e)): a negative
  # syscall return names its errno; 0 and unknown numbers have none.
  printf("errno-neg:%s|%s|%s|%s|%d|%d\n", errno_str(-2), errno_str(-22), errno_str(0),
         errno_str(-9999), errno_p(-2), errno_p(-9999))
  printf("faults:%s|%s|%s|%s\n", user_string(0, "ufault"), user_string_quoted(0),
         kernel_string(0, "kfault"), user_string_n(0, 3, "nfault"))
  try { user_string(0) } catch (e) { printf("user_string-err:%s\n", e) }
  printf("aux:%s|%s|%s|%s|%s|%s|%s|%s\n", _dfd_str(-100), _dfd_str(3),
         _sys_open_flag_str(0x80241), _sys_open_flag_str(0), _mmap_flags(0x22), _mmap_flags(0),
         _mprotect_prot_str(3), _mprotect_prot_str(0))
  printf("argv:%s\n", __get_argv(0, 0))
EOF
BODY_WANT='strlen:5 0 3
substr:[he][ell][lo][][][]
strpos:2 3 -1 0 -1
isinstr:1 0 0
str_replace:[a_b_c][ba][abc][heLLLLo][]
tokenize:[a][b][c][][x][]
strtol:255 26 -42 493 16 5 12 1 0
sprint:-42|s
text_str:a\tb\n\"q\"\\|\001x\177
text_strn:"abc"|"abc"...|a\nb
stringat:98 97
stringat-err:Position out of bounds
isdigit:1 0 0
errno:ENOENT|-2 (ENOENT)|0xff|-512|3
errno-neg:ENOENT|EINVAL|||2|0
faults:ufault|0x0|kfault|nfault
user_string-err:user string copy fault -14 at 0x0 [man error::fault]
aux:AT_FDCWD|3|O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC|O_RDONLY|MAP_PRIVATE|MAP_ANONYMOUS|0x0|PROT_READ|PROT_WRITE|PROT_NONE
argv:[]
'

# ---- kernel probe: fires on the target's open of $MARK ------------------------------------------
{
  echo 'probe syscall.openat {'
  echo '  if (pid() != target()) next'
  echo '  f = user_string($filename)'
  echo "  if (f != \"$MARK\") next"
  cat "$T_TMP/body.stp"
  cat <<'EOF'
  printf("ctx:%d %d %d %d %d %d %d %s\n", pid(), tid(), ppid(), uid(), gid(), euid(), egid(), execname())
  printf("probe:%d|%s|%s|[%s]|%d|%d\n", target() == pid(), pn(), pp(), probefunc(), user_mode(), cpu())
  printf("path:%s|%s|%s|%d|%s\n", f, user_string_n($filename, 4), user_string_quoted($filename),
         strlen(f), substr(f, strlen(f) - 6, 6))
  printf("time:%d %d %d %d\n", gettimeofday_s(), gettimeofday_ms(), gettimeofday_us(), gettimeofday_ns())
  printf("clock:%d %d %d %d\n", local_clock_s(), local_clock_ms(), local_clock_us(), local_clock_ns())
  exit()
}
EOF
} > "$T_TMP/kernel.stp"

NCPU=$(nproc --all)
ctx_checks() {  # ctx_checks OUT: the time/clock/cpu lines of OUT are consistent and sane
  local now s ms us ns cs cms cus cns cpu
  now=$(date +%s)
  read -r s ms us ns <<< "$(sed -n 's/^time://p' "$1")"
  read -r cs cms cus cns <<< "$(sed -n 's/^clock://p' "$1")"
  [ -n "$ns" ] && [ -n "$cns" ] || { echo "no time/clock line" >&2; return 1; }
  [ $((now - s)) -ge 0 ] && [ $((now - s)) -le 120 ] || { echo "gettimeofday_s $s vs date $now" >&2; return 1; }
  [ $((ms / 1000)) -ge "$s" ] && [ $((us / 1000)) -ge "$ms" ] && [ $((ns / 1000)) -ge "$us" ] &&
    [ $((ns / 1000000000 - s)) -le 1 ] || { echo "gettimeofday_* not consistent: $s $ms $us $ns" >&2; return 1; }
  [ "$cs" -gt 0 ] && [ $((cms / 1000)) -ge "$cs" ] && [ $((cus / 1000)) -ge "$cms" ] &&
    [ $((cns / 1000)) -ge "$cus" ] && [ $((cns / 1000000000 - cs)) -le 1 ] ||
    { echo "local_clock_* not consistent: $cs $cms $cus $cns" >&2; return 1; }
  if [ -n "${2:-}" ]; then
    cpu=${2}
    [ "$cpu" -ge 0 ] && [ "$cpu" -lt "$NCPU" ] || { echo "cpu() $cpu not in [0, $NCPU)" >&2; return 1; }
  fi
}

rc=0
"$UKSTAP" -o "$T_TMP/k.out" "$T_TMP/kernel.stp" -c "$FP $MARK" > "$T_TMP/k.prog" 2> "$T_TMP/k.err" || rc=$?
t "kernel probe calling every function: loads and runs" 0 '' '' -- sh -c "cat '$T_TMP/k.err'; exit $rc"
t "kernel probe: string/errno/aux functions" 0 "$BODY_WANT" '' -- sed -n '/^ctx:/,$d; p' "$T_TMP/k.out"
PROG_CTX=$(grep '^ctx:' "$T_TMP/k.prog")
t "kernel probe: pid tid ppid uid gid euid egid execname = the target's own" 0 "$PROG_CTX
" '' -- grep '^ctx:' "$T_TMP/k.out"
t "kernel probe: target pn pp probefunc user_mode" 0 '~^probe:1\|syscall\.openat\|kernel\.trace\("syscalls:sys_enter_openat"\)\|\[\]\|0\|[0-9]+$' '' -- grep '^probe:' "$T_TMP/k.out"
t "kernel probe: user_string user_string_n user_string_quoted" 0 "path:$MARK|${MARK:0:4}|\"$MARK\"|${#MARK}|marker
" '' -- grep '^path:' "$T_TMP/k.out"
KCPU=$(sed -n 's/^probe:.*|//p' "$T_TMP/k.out")
t "kernel probe: cpu, gettimeofday_*, local_clock_*" 0 '' '' -- ctx_checks "$T_TMP/k.out" "$KCPU"

# ---- begin probe (native, in ukstap itself) -------------------------------------------------------
{
  echo 'probe begin {'
  cat "$T_TMP/body.stp"
  cat <<'EOF'
  printf("ctx:%d %d %d %d %d %d %d %s\n", pid(), tid(), ppid(), uid(), gid(), euid(), egid(), execname())
  printf("probe:%d|%s|%s|[%s]|%d|%d\n", target(), pn(), pp(), probefunc(), user_mode(), cpu())
  printf("time:%d %d %d %d\n", gettimeofday_s(), gettimeofday_ms(), gettimeofday_us(), gettimeofday_ns())
  printf("clock:%d %d %d %d\n", local_clock_s(), local_clock_ms(), local_clock_us(), local_clock_ns())
  exit()
}
EOF
} > "$T_TMP/begin.stp"
# Run directly from this shell: ukstap's pid is $!, its parent this shell ($$), its comm "ukstap".
rc=0
"$UKSTAP" -o "$T_TMP/b.out" -x $$ "$T_TMP/begin.stp" > /dev/null 2> "$T_TMP/b.err" &
UKPID=$!
wait $UKPID || rc=$?
t "begin probe calling every function: runs" 0 '' '' -- sh -c "cat '$T_TMP/b.err'; exit $rc"
t "begin probe: string/errno/aux functions (same as the kernel probe)" 0 "$BODY_WANT" '' -- sed -n '/^ctx:/,$d; p' "$T_TMP/b.out"
t "begin probe: pid tid ppid uid gid euid egid execname = ukstap's own" 0 "ctx:$UKPID $UKPID $$ $(id -ru) $(id -rg) $(id -u) $(id -g) ukstap
" '' -- grep '^ctx:' "$T_TMP/b.out"
BCPU=$(sed -n 's/^probe:.*|//p' "$T_TMP/b.out")
t "begin probe: target pn pp probefunc user_mode" 0 "probe:$$|begin|begin|[]|0|$BCPU
" '' -- grep '^probe:' "$T_TMP/b.out"
t "begin probe: cpu, gettimeofday_*, local_clock_*" 0 '' '' -- ctx_checks "$T_TMP/b.out" "$BCPU"

# ---- argstr of execve and mmap2 (docs/STAP-FORMATS.md §7) -------------------------------------------------
# env -i X=1 Y="a b" FP MARK: the second execve is the program's, with a known environment.
rc=0
"$UKSTAP" -o "$T_TMP/ex.out" -e 'probe syscall.execve { if (pid() == target()) println(argstr) }
probe syscall.mmap2 { if (pid() == target() && $len == 28672) println(argstr) }' \
  -c "env -i X=1 'Y=a b' $FP $MARK" > /dev/null 2> "$T_TMP/ex.err" || rc=$?
t "execve/mmap2 argstr: run" 0 '' '' -- sh -c "cat '$T_TMP/ex.err'; exit $rc"
t "execve argstr: PATH, [ARGV], [ENVP] quoted (§7)" 0 "\"$FP\", [\"$FP\", \"$MARK\"], [\"X=1\", \"Y=a b\"]
" '' -- grep -F "\"$FP\", [" "$T_TMP/ex.out"
t "mmap2 argstr: %p, %u, PROT, FLAGS, %d, %d (§7)" 0 '0x0, 28672, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS|MAP_POPULATE, -1, 0
' '' -- grep '^0x0, 28672,' "$T_TMP/ex.out"

# ---- verifier cost: every function in one probe, at MAXSTRINGLEN 128 and 512 -----------------------
# The kernel's count for the loaded program (bpf_prog_info.verified_insns, progs/proginfo.c: the
# installed bpftool may not show it); the budget is 1,000,000 processed instructions per program.
PI=$T_TMP/proginfo
if t_build "proginfo" gcc -O2 -Wall -o "$PI" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/proginfo.c" -lbpf; then
  for M in 128 512; do
    "$UKSTAP" -D MAXSTRINGLEN=$M "$T_TMP/kernel.stp" -c "sleep 3" > /dev/null 2> "$T_TMP/v$M.err" &
    vp=$!
    n=
    # While the run lives (compile included: 200 tries, ~10 s, were a fixed bound before); the
    # program stays loaded for the 3 s of its -c command.
    for _ in $(seq 2400); do
      kill -0 $vp 2> /dev/null || break
      # that run's own program (the ids its descriptors name), not another run's of the same name
      ids=$(grep -hs '^prog_id:' /proc/$vp/fdinfo/* | awk '{print $2}' | sort -u)
      [ -n "$ids" ] && n=$("$PI" stp_probe_0 $ids) && break
      n=
      sleep 0.05
    done
    wait $vp
    echo "  all functions in one probe, MAXSTRINGLEN=$M: verified_insns xlated_insns = ${n:-?}"
    set -- $n
    t "verifier cost at MAXSTRINGLEN=$M is well under the 1M budget (< 250000)" 0 '' '' -- \
      sh -c "[ -n '${1:-}' ] && [ '${1:-0}' -lt 250000 ] || { echo 'verified_insns: ${1:-unknown}' >&2; cat '$T_TMP/v$M.err' >&2; exit 1; }"
  done
fi

t_done
