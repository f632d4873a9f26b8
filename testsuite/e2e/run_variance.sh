#!/bin/bash
# @variance(s[, shift]) against SystemTap's documented values (`man stap`, "statistics": for
# 1..5, @variance(x) prints 12 and @variance(x, 1) prints 2 — SystemTap's integer Welford mean and
# its total-variance aggregation, not the exact 2.5), in a BPF probe and in a user-space probe,
# and its bad uses: a shift out of 0..62, two shifts for one statistic.
. "$(dirname "$0")/../e2e-lib.sh"

five='for (i = 1; i <= 5; i++) x <<< i'
t variance_shift0_oneshot 0 $'12\n' '' -- "$UKSTAP" -e "global x probe oneshot { $five; println(@variance(x)) }"
t variance_shift1_oneshot 0 $'2\n' '' -- "$UKSTAP" -e "global x probe oneshot { $five; println(@variance(x, 1)) }"
# The samples added in another probe (a timer), read in the end probe.
t variance_shift1_bpf 0 $'2 12\n' '' -- "$UKSTAP" -e "global x, y
probe timer.ms(1) { for (i = 1; i <= 5; i++) { x[\"a\"] <<< i; y <<< i }; exit() }
probe end { printf(\"%d %d\\n\", @variance(x[\"a\"], 1), @variance(y)) }"
# The same fed in a BPF probe (perl's one getppid(), guarded by a flag; timer.ms above runs in
# user space): a statistic @variance reads keeps its running mean in the kernel too.
t variance_kernel_fed 0 $'2 12\n' '' -- "$UKSTAP" -c 'perl -e getppid' -e "global x, y, done
probe syscall.getppid { if (pid() == target() && !done) { done = 1
  for (i = 1; i <= 5; i++) { x[\"a\"] <<< i; y <<< i } } }
probe end { printf(\"%d %d\\n\", @variance(x[\"a\"], 1), @variance(y)) }"
# One sample: no variance (0).
t variance_one_sample 0 $'0\n' '' -- "$UKSTAP" -e 'global x probe oneshot { x <<< 7; println(@variance(x, 4)) }'
t variance_shift_range 1 '' '~@variance bit shift 63 is out of range' -- \
  "$UKSTAP" -e 'global x probe oneshot { x <<< 7; println(@variance(x, 63)) }'
t variance_two_shifts 1 '' '~only one bit shift may be used' -- \
  "$UKSTAP" -e 'global x probe oneshot { x <<< 7; println(@variance(x, 2) + @variance(x, 3)) }'
# A statistic no @variance reads keeps no running mean (bpf/stp_bpf_maps.h stp_stat_add): its
# @count/@sum/@min/@max/@avg are the samples' own (avg = sum / count, SystemTap's integer @avg),
# and a foreach sorted by @avg orders by sum / count, not by insertion, sum or count:
# a = {1, 2} avg 1, b = {10} avg 10, c = {3, 4, 5} avg 4.
# A BPF probe (timer.ms runs in user space), once: perl's one getppid() call.
t stats_without_variance_bpf 0 $'b 10 c 4 a 1 \na 2 3 1 2 1\nc 3 12 3 5 4\n' '' -- "$UKSTAP" -c 'perl -e getppid' -e "global s, done
probe syscall.getppid { if (pid() == target() && !done) { done = 1
  s[\"a\"] <<< 1; s[\"a\"] <<< 2; s[\"b\"] <<< 10; for (i = 3; i <= 5; i++) s[\"c\"] <<< i } }
probe end { foreach (k in s @avg-) printf(\"%s %d \", k, @avg(s[k])); println(\"\")
  printf(\"a %d %d %d %d %d\\n\", @count(s[\"a\"]), @sum(s[\"a\"]), @min(s[\"a\"]), @max(s[\"a\"]), @avg(s[\"a\"]))
  printf(\"c %d %d %d %d %d\\n\", @count(s[\"c\"]), @sum(s[\"c\"]), @min(s[\"c\"]), @max(s[\"c\"]), @avg(s[\"c\"])) }"
t_done
