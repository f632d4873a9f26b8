#!/bin/bash
# Loops in kernel-context probes (issue 16): for, while, nested loops, break/continue, return
# from a loop in a function, next from a loop, try/catch in a loop, a tracepoint field and a
# foreach inside a loop body, and MAXACTION. Two implementations (btf/kernel_features.h): the
# bpf_iter_num iterator (Linux 6.4+) and bpf_loop() callbacks (5.17+, what Debian 12's 6.1
# gets); $UKSTAP_LOOP_IMPL forces one where the kernel has both, so this host checks both and
# a 6.1 guest checks bpf_loop. Truths: the same arithmetic in bash, and the shell's own $$ for
# the kill(2) probe's $pid field.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"

PROG='
global res, arr
function isqrt(n) { for (k = 0; k < 1000; k++) if (k * k >= n) return k; return -1 }
function words(n) { s = ""; for (i = 0; i < n; i++) s .= sprintf("%d,", i); return s }
probe kernel.trace("syscalls:sys_enter_kill") {
  if (pid() != target() || $sig != 0 || "for" in res) next
  t = 0; for (i = 1; i <= 100; i++) { if (i % 7 == 0) continue; t += i; if (i == 90) break }
  res["for"] = t
  w = 0; j = 50; while (j > 0) { w += j; j -= 3 }
  res["while"] = w
  n = 0; for (a = 0; a < 10; a++) for (b = 0; b < a; b++) n += a * b
  res["nested"] = n
  res["isqrt"] = isqrt(200)
  res["words"] = strlen(words(12))
  p = $pid; d = 0; while (p > 0) { d += p % 10; p /= 10 }
  res["digits"] = d
  c = 0; for (i = -1; i <= 3; i++) { try { c += 12 / i } catch { c += 1000 } }
  res["try"] = c
  arr[1] = 3; arr[2] = 5; arr[5] = 2
  fe = 0; foreach (k in arr) for (i = 0; i < arr[k]; i++) fe += k
  res["foreach"] = fe
  res["next"] = -1
  for (i = 0; i < 10; i++) if (i == 4) { res["next"] = i; next }
  res["after"] = 1
}
probe timer.ms(10) {
  if (!("timer" in res) && ("for" in res)) {
    m = 0; for (i = 0; i < 30; i++) m += i * i
    res["timer"] = m
  }
  if ("timer" in res) exit()
}
probe end { foreach (k+ in res) printf("%s %d\n", k, res[k]) }
'

# The kill probe computes once; the timer probe then computes and ends the run (the command
# repeats its kill(2) until then).

# The same in bash: the expected output, keys sorted.
expected() {
  local t=0 i w=0 j=50 n=0 a b d=0 p=$1 c=0 m=0
  for ((i = 1; i <= 100; i++)); do ((i % 7 == 0)) && continue; ((t += i)); ((i == 90)) && break; done
  while ((j > 0)); do ((w += j, j -= 3)); done
  for ((a = 0; a < 10; a++)); do for ((b = 0; b < a; b++)); do ((n += a * b)); done; done
  while ((p > 0)); do ((d += p % 10, p /= 10)); done
  for ((i = -1; i <= 3; i++)); do if ((i == 0)); then ((c += 1000)); else ((c += 12 / i)); fi; done
  for ((i = 0; i < 30; i++)); do ((m += i * i)); done
  local words=""; for ((i = 0; i < 12; i++)); do words+="$i,"; done
  printf '%s %d\n' digits $d for $t foreach $((1 * 3 + 2 * 5 + 5 * 2)) isqrt 15 nested $n next 4 \
    timer $m try $c while $w words ${#words} | sort
}

for impl in iter bpf_loop; do
  out=$(UKSTAP_LOOP_IMPL=$impl timeout 120 "$UKSTAP" -e "$PROG" \
    -c "bash -c 'echo \$\$ > $T_TMP/pid; for i in {1..1000}; do kill -0 \$\$; sleep 0.01; done'" 2> "$T_TMP/stderr"); rc=$?
  want=$(expected "$(cat "$T_TMP/pid" 2>/dev/null || echo 0)")
  t "loops ($impl): output equals bash's" 0 "$want" '' -- printf '%s' "$out"
  t "loops ($impl): exit status 0, stderr empty" 0 '' '' -- bash -c "cat '$T_TMP/stderr' >&2; exit $rc"

  # MAXACTION (default 1000): every iteration costs an action, as SystemTap counts statements.
  t "loops ($impl): 5000 iterations exceed MAXACTION in a kernel probe" 1 '' '~^ERROR: MAXACTION exceeded' -- \
    env UKSTAP_LOOP_IMPL=$impl timeout 120 "$UKSTAP" -c 'bash -c "kill -0 \$\$"' -e '
    probe kernel.trace("syscalls:sys_enter_kill") {
      if (pid() == target()) { n = 0; while (1) n++; println(n) }
    }'
  t "loops ($impl): -DMAXACTION=20000 allows them" 0 $'5000\n' '' -- \
    env UKSTAP_LOOP_IMPL=$impl timeout 120 "$UKSTAP" -DMAXACTION=20000 -c 'bash -c "kill -0 \$\$"' -e '
    global r
    probe kernel.trace("syscalls:sys_enter_kill") {
      if (pid() == target()) for (i = 0; i < 5000; i++) r++
    }
    probe end { println(r) }'
done
# A kernel with neither (before 5.17): pass 3 names what is missing, nothing is loaded.
t "a kernel without bpf_loop and bpf_iter_num: the error names both versions" 1 '' \
  '~^semantic error: a loop in a kernel-context probe needs Linux 5.17 \(bpf_loop helper\) or 6.4 \(bpf_iter_num kfuncs\); this kernel \(.*\) has neither' -- \
  env UKSTAP_LOOP_IMPL=none timeout 60 "$UKSTAP" -p4 -e '
    probe kernel.trace("syscalls:sys_enter_kill") { for (i = 0; i < 3; i++) n++ }'
t_done
