#!/bin/bash
# The compatibility benchmark's harness (bench/compat.py, `make compat`) on a tiny examples tree
# of our own (testsuite/compat/examples/t/*.stp with hand-made .meta files) and a tiny tapset
# tree (testsuite/compat/tapset): each script's classification and table row against what the
# rules say (written out below by hand), the per-run timeout killing its process group, the
# grouped blockers, and the judging of runs whose output is missing, lacks the script's header
# or lacks the column header of the sample output shipped beside the script (a fake ukstap).
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
top=$UKSTAP_TOP_SRCDIR
fx=$top/testsuite/compat
out=$T_TMP/compat.md
blk=$T_TMP/blockers.md

t "harness runs on the fixtures" 0 '~^compat: 14 scripts: p2 12, p4 12, runs 8; servable 8: p2 8, p4 8, runs 6 ' '*' -- \
  python3 "$top/bench/compat.py" --ukstap "$UKSTAP" --examples "$fx/examples" \
  --tapsets "$fx/tapset" --out "$out" --blockers "$blk" --timeout 6

row() {  # row NAME EXPECTED-ROW: the table holds exactly that line
  t "row $1" 0 '*' '' -- grep -Fxq -- "$2" "$out"
}
row hello '| t/hello.stp | yes | yes | yes | yes |  |'
row header '| t/header.stp | yes | yes | yes | yes |  |'
row tracepoint '| t/tracepoint.stp | yes | yes | yes | yes |  |'
row sample '| t/sample.stp | yes | yes | yes | yes |  |'
# -gp1 in the .meta: p2 and p4 are measured without it; runs is the .meta's own command
row p1only '| t/p1only.stp | yes | yes | yes | yes (-p1) |  |'
row pure_c '| t/pure_c.stp | yes | yes | yes | yes |  |'
row fails '| t/fails.stp | yes | yes | yes | no | ERROR: compat deliberate failure |'
row forever '| t/forever.stp | yes | yes | yes | no | timeout |'
# a kprobe-only alias is found through the tapset tree and named; ukstap does not know it
t "row kprobe_alias" 0 '*' '' -- grep -Eq -- \
  '^\| t/kprobe_alias.stp \| no: tapset alias fakekp.open: kprobes: kernel.function\("do_sys_openat2"\) \| no \| no \| no \(-p4\) \| semantic error: .*fakekp' "$out"
# `a !, b`: a's tracepoint is missing, b is a kprobe; the probe is optional (?) so SystemTap
# skips it and only begin is left: nothing traced, not servable (the run itself works)
row mixed '| t/mixed.stp | no: tapset alias fakemix.gone: no tracepoint no_such_tracepoint_compat_test on this kernel | yes | yes | yes |  |'
row missing_prog '| t/missing_prog.stp | no: not installed: no-such-program-compat-test (the -c command) | yes | yes | no | ukstap: cannot run the -c command '"'"'no-such-program-compat-test'"'"': command not found |'
t "row embedded" 0 '*' '' -- grep -Eq '^\| t/embedded.stp \| no: embedded C: .*kernel internals' "$out"
row nometa '| t/nometa.stp | no: no .meta: no command line | yes | yes | - | no .meta: no command line |'
t "totals" 0 '*' '' -- grep -Fxq '| servable | 8 | 8 | 8 | 6 |' "$out"
t "rules printed under the table" 0 '*' '' -- grep -q '^- \*\*kprobes\*\*: ' "$out"
# the timed-out run's process group is gone (SIGINT, then SIGKILL)
t "timeout leaves no process" 1 '' '' -- pgrep -f "$UKSTAP forever.stp"
t "blockers grouped" 0 '*' '' -- grep -Fxq -- '- **1** `timeout`' "$blk"
t "blockers name the error" 0 '*' '' -- grep -Fq 'ERROR: compat deliberate failure' "$blk"

# A binary that succeeds silently: scripts that print in begin/end must be judged as not running.
t "fake ukstap" 0 '*' '*' -- python3 "$top/bench/compat.py" --ukstap "$fx/fake-ukstap" \
  --examples "$fx/examples" --tapsets "$fx/tapset" --out "$T_TMP/fake.md" --only /hello --timeout 6
t "silent run is not a run" 0 '*' '' -- grep -Fxq \
  '| t/hello.stp | yes | yes | yes | no | no output (the script prints) |' "$T_TMP/fake.md"
t "header checked" 0 '*' '*' -- env FAKE_UKSTAP_OUTPUT="other text" python3 "$top/bench/compat.py" --ukstap "$fx/fake-ukstap" \
  --examples "$fx/examples" --tapsets "$fx/tapset" --out "$T_TMP/fake2.md" --only /header --timeout 6
t "missing header is not a run" 0 '*' '' -- grep -Fq \
  "| t/header.stp | yes | yes | yes | no | output lacks the script's header 'COMPAT HEADER' |" "$T_TMP/fake2.md"
t "sample checked" 0 '*' '*' -- env FAKE_UKSTAP_OUTPUT="ALPHA BETA" python3 "$top/bench/compat.py" \
  --ukstap "$fx/fake-ukstap" --examples "$fx/examples" --tapsets "$fx/tapset" \
  --out "$T_TMP/fake3.md" --only /sample --timeout 6
t "output unlike the sample is not a run" 0 '*' '' -- grep -Fxq \
  "| t/sample.stp | yes | yes | yes | no | output lacks the header line of SystemTap's sample (sample.txt): 'ALPHA BETA GAMMA' |" "$T_TMP/fake3.md"
# A timer whose period is not shorter than -T never fires before the exit (SystemTap prints
# nothing either): a silent run of such a script is a run.
mkdir -p "$T_TMP/slow/t"
printf 'probe timer.ms(5000) { println("late") }\n' > "$T_TMP/slow/t/slow.stp"
printf 'title: slow timer\nname: slow.stp\ntest_installcheck: stap slow.stp -T 1\n' > "$T_TMP/slow/t/slow.meta"
t "slow timer: harness" 0 '*' '*' -- python3 "$top/bench/compat.py" --ukstap "$fx/fake-ukstap" \
  --examples "$T_TMP/slow" --tapsets "$fx/tapset" --out "$T_TMP/slow.md" --timeout 6
t "slow timer: a silent run under -T 1 is a run" 0 '*' '' -- grep -Eq '^\| t/slow.stp \| yes \| yes \| yes \| yes \|' "$T_TMP/slow.md"
# process("./tiny").function("work") reading $n: servable with DWARF, not when stripped (the
# symbol table has no parameters). A copy of the tree, since the test builds ./tiny into it.
cp -r "$fx/examples" "$T_TMP/ex"
gcc -g -O0 -o "$T_TMP/ex/t/tiny" "$fx/tiny.c"
t "dwarf: servable with -g" 0 '*' '*' -- python3 "$top/bench/compat.py" --classify-only \
  --examples "$T_TMP/ex" --tapsets "$fx/tapset" --out "$T_TMP/dwarf1.md" --only /dwarf
t "dwarf row: -g" 0 '*' '' -- grep -Eq '^\| t/dwarf.stp \| yes \|' "$T_TMP/dwarf1.md"
strip "$T_TMP/ex/t/tiny"
t "dwarf: stripped" 0 '*' '*' -- python3 "$top/bench/compat.py" --classify-only \
  --examples "$T_TMP/ex" --tapsets "$fx/tapset" --out "$T_TMP/dwarf2.md" --only /dwarf
t "dwarf row: stripped" 0 '*' '' -- grep -Fq \
  "| t/dwarf.stp | no: not installed: debuginfo of $T_TMP/ex/t/tiny (its \$variables need DWARF) |" "$T_TMP/dwarf2.md"
# The rules that judge a script by what it does, on a tree written here (--classify-only):
# assigning a kernel probe's $variable, @cast to a type the kernel's BTF lacks, a -c command that
# fails with no tracer at all; and their negatives (netfilter's $verdict, a BTF type, a comparison).
mkdir -p "$T_TMP/rules/t"
rule_case() {  # rule_case NAME SCRIPT [-c COMMAND]
  printf '%s\n' "$2" > "$T_TMP/rules/t/$1.stp"
  printf 'title: %s\nname: %s.stp\ntest_installcheck: stap %s.stp -T 1%s\n' "$1" "$1" "$1" \
    "${3:+ -c \"$3\"}" > "$T_TMP/rules/t/$1.meta"
}
rule_case kwrite 'probe kernel.trace("sched_process_exec") { $old_pid = 0 }'
rule_case kcompare 'probe kernel.trace("sched_process_exec") { if ($old_pid == 0) println(1) }'
rule_case nfverdict 'probe netfilter.hook("NF_INET_LOCAL_IN") { $verdict = 1 }'
rule_case castbad 'probe kernel.trace("sched_process_exec") { println(@cast($p, "struct no_such_type_compat")->x) }'
rule_case castok 'probe kernel.trace("sched_process_exec") { println(@cast($p, "struct task_struct")->pid) }'
rule_case devcmd 'probe kernel.trace("sched_process_exec") { println(1) }' 'cat /dev/no-such-device-compat-test'
t "rules: classify" 0 '*' '*' -- python3 "$top/bench/compat.py" --classify-only \
  --examples "$T_TMP/rules" --tapsets "$fx/tapset" --out "$T_TMP/rules.md"
t "rule kernel write" 0 '*' '' -- grep -Fq \
  '| t/kwrite.stp | no: kernel write: $old_pid = ... in kernel.trace("sched_process_exec") needs a kprobe |' "$T_TMP/rules.md"
t "rule kernel write: == is a read" 0 '*' '' -- grep -Eq '^\| t/kcompare.stp \| yes \|' "$T_TMP/rules.md"
t "rule kernel write: netfilter verdict" 0 '*' '' -- grep -Eq '^\| t/nfverdict.stp \| yes \|' "$T_TMP/rules.md"
t "rule @cast type" 0 '*' '' -- grep -Fq \
  "| t/castbad.stp | no: not installed: type no_such_type_compat of @cast (not in the kernel's BTF; no DWARF has it) |" "$T_TMP/rules.md"
t "rule @cast type: BTF type" 0 '*' '' -- grep -Eq '^\| t/castok.stp \| yes \|' "$T_TMP/rules.md"
t "rule machine" 0 '*' '' -- grep -Fq \
  "| t/devcmd.stp | no: machine: the -c command fails without tracing: cat: /dev/no-such-device-compat-test: No such file or directory |" "$T_TMP/rules.md"
# `%( $# >= 1 %? A %: B %)` in a probe point is chosen by the .meta's argument count, and `$#`
# is no comment: with one argument the point is a tracepoint this kernel lacks.
rule_case argc 'probe %( $# >= 1 %? kernel.trace("no_such_tracepoint_compat_argc") %: begin %) { println(1) }'
sed -i 's/argc.stp -T 1/argc.stp -T 1 x/' "$T_TMP/rules/t/argc.meta"
t "rules: argc classify" 0 '*' '*' -- python3 "$top/bench/compat.py" --classify-only \
  --examples "$T_TMP/rules" --tapsets "$fx/tapset" --out "$T_TMP/rules2.md" --only /argc
t "rule argc conditional" 0 '*' '' -- grep -Fq \
  '| t/argc.stp | no: no tracepoint no_such_tracepoint_compat_argc on this kernel |' "$T_TMP/rules2.md"
# A script whose only output is an empty line (an end probe printing "\n" when nothing was
# seen) shows nothing of the script working: no run.
mkdir -p "$T_TMP/blank/t"
printf 'probe end { printf("\\n") }\n' > "$T_TMP/blank/t/blank.stp"
printf 'title: blank\nname: blank.stp\ntest_installcheck: stap blank.stp -T 1\n' > "$T_TMP/blank/t/blank.meta"
t "blank line: harness" 0 '*' '*' -- env FAKE_UKSTAP_BLANK=1 python3 "$top/bench/compat.py" \
  --ukstap "$fx/fake-ukstap" --examples "$T_TMP/blank" --tapsets "$fx/tapset" --out "$T_TMP/blank.md" --timeout 6
t "blank line: no run" 0 '*' '' -- grep -Fq '| t/blank.stp | yes | yes | yes | no | no output (the script prints) |' "$T_TMP/blank.md"
t "unknown ukstap path" 1 '' '~no executable ukstap' -- python3 "$top/bench/compat.py" \
  --ukstap /nonexistent/ukstap --examples "$fx/examples"
t_done
