#!/bin/bash
# Language features SystemTap's tapsets and examples rely on (root; never skipped in CI):
# combined prologue/epilogue aliases, embedded-C expressions and @const in guru mode, and the
# macro libraries of tapsets/*.stpm. Expected values come from the language's definition
# (langref: a prologue runs before the handler, an epilogue after it; @defined folds to the
# branch that resolves) and from arithmetic done here, not from ukstap's output.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"

# The prologue sets x to 1 before the handler, the handler sets it to 2, the epilogue sees 2.
t "combined alias: prologue, handler, epilogue in order" 0 $'pro 1\nbody 1\nepi 2\n' '' -- \
  "$UKSTAP" -e 'probe a = begin { x = 1; printf("pro %d\n", x) }, { printf("epi %d\n", x) }
                probe a { printf("body %d\n", x); x = 2 }
                probe begin(10) { exit() }'
# Two aliases stacked: expanding `outer` wraps the handler in outer's blocks, and expanding
# `inner` wraps that in inner's, so the epilogues run outer then inner.
t "combined alias over an alias" 0 $'body\nouter epi\ninner epi\n' '' -- \
  "$UKSTAP" -e 'probe inner = begin { }, { println("inner epi") }
                probe outer = inner { }, { println("outer epi") }
                probe outer { println("body") }
                probe begin(10) { exit() }'

t "embedded expression: long" 0 $'42\n' '' -- \
  "$UKSTAP" -g -e 'probe begin { println(%{ 6 * 7 %}); exit() }'
t "embedded expression: /* string */" 0 $'embedded\n' '' -- \
  "$UKSTAP" -g -e 'probe begin { println(%{ /* string */ "embedded" %}); exit() }'
# An embedded expression in a tapset and one in the script: two functions in the generated C.
mkdir -p "$T_TMP/tapset"
echo 'function five:long () { return %{ 5 %} }' > "$T_TMP/tapset/five.stp"
t "embedded expressions of two files" 0 $'11\n' '' -- \
  "$UKSTAP" -I "$T_TMP/tapset" -g -e 'probe begin { println(five() + %{ 6 %}); exit() }'
# BPF_ANY is 0 and BPF_EXIST 2 in the kernel's uapi/linux/bpf.h.
t "@const of kernel enumerators" 0 $'0 2\n' '' -- \
  "$UKSTAP" -g -e 'probe begin { printf("%d %d\n", @const("BPF_ANY"), @const("BPF_EXIST")); exit() }'

t "@choose_defined falls back when the first does not resolve" 0 $'42\n' '' -- \
  "$UKSTAP" -e 'probe begin { println(@choose_defined($no_such_var, 42)); exit() }'
# sched_process_exec's $pid is the pid of the task that called exec: the -c command's.
t "@choose_defined takes the first when it resolves" 0 $'1\n' '' -- \
  "$UKSTAP" -c /bin/true -e 'probe kernel.trace("sched:sched_process_exec") {
      if (pid() == target()) { println(@choose_defined($pid, -1) == target()); exit() } }'

# 3, 5 and 7 into s[1]: count 3, min 3, max 7, sum 15, avg 5; 10 into s[2].
t "@prints1 of an array of aggregates" 0 \
  $'[1] @count=3 @min=3 @max=7 @sum=15 @avg=5\n[2] @count=1 @min=10 @max=10 @sum=10 @avg=10\n' '' -- \
  "$UKSTAP" -e 'global s; probe begin { s[1] <<< 3; s[1] <<< 5; s[1] <<< 7; s[2] <<< 10
                @prints1(s); exit() }'
t "@try_assign takes the fallback on an error" 0 $'7 3\n' '' -- \
  "$UKSTAP" -e 'probe begin { z = 0; @try_assign(a, 1 / z, 7); @try_assign(b, 6 / 2, 9)
                printf("%d %d\n", a, b); exit() }'
t "@this1 keeps a value per thread" 0 $'5\n' '' -- \
  "$UKSTAP" -e 'probe begin { @this1 = 5; println(@this1); exit() }'
t "a macro nobody defines" 1 '' "~^parse error: unknown macro @not_a_macro$" -- \
  "$UKSTAP" -p1 -e 'probe begin { @not_a_macro(1) }'
# The prometheus macros expand to the label=value text SystemTap's prometheus tapset documents;
# the prometheus probe is the procfs file __prometheus (64 KiB, tapsets/prometheus.stp).
t "@prometheus_dump_array2 quotes both labels" 0 \
  '~\("x"\)\) \. \("="\)\) \. \(string_quoted\(sprint\(__p1\)\)\)\) \. \(","\)\) \. \("y"\)\) \. \("="\)\) \. \(string_quoted\(sprint\(__p2\)\)\)' '' -- \
  "$UKSTAP" -p1 -e 'global a; probe prometheus { @prometheus_dump_array2(a, "m", "x", "y") }'
t "prometheus probe: procfs(\"__prometheus\").read" 0 \
  '~^procfs\("__prometheus"\)\.read\.maxsize\(65536\) .*<- prometheus \*/$' '' -- \
  "$UKSTAP" -p2 -e 'probe prometheus { $value = "1" }'
t_done
