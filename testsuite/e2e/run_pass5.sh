#!/bin/bash
# Pass 5's run configuration (loader/run_config.h: one struct for the BPF and the native side)
# and its reading of a verifier refusal (loader/bpf_module.h).
#
# HZ(): the truth is the kernel's, found without ukstap: the rate at which jiffies advance
# (two readings of /proc/timer_list: "now at N nsecs" and "jiffies: N"), and CONFIG_HZ where
# libbpf reads it (/boot/config-RELEASE, else /proc/config.gz). Both sides must agree with it:
# a begin probe runs in ukstap's process (native), a timer.profile probe in the kernel (BPF).
# A kernel whose HZ is not 250 is simulated in a private mount namespace: /boot/config-RELEASE
# holds this kernel's configuration with another CONFIG_HZ, seen by ukstap and libbpf alike
# (before the fix a begin/end-only script printed 250 there whatever the configuration said).
set -u
. "$(dirname "$0")/../e2e-lib.sh"

REL=$(uname -r)
kconfig_text() {  # where libbpf reads it
  if [ -r "/boot/config-$REL" ]; then cat "/boot/config-$REL"
  elif [ -r /proc/config.gz ]; then zcat /proc/config.gz
  fi
}
CONFIG_HZ=$(kconfig_text | sed -n 's/^CONFIG_HZ=//p')

# The jiffies rate over about a second (the sleep spaces the two readings; it asserts nothing).
timer_list() { awk '/^now at/ { print $3 } /^jiffies:/ { print $2; exit }' /proc/timer_list; }
jiffies_rate() {
  local a b
  a=($(timer_list)); sleep 1; b=($(timer_list))
  echo $(( (${b[1]} - ${a[1]}) * 1000000000 / (${b[0]} - ${a[0]}) ))
}
near() {  # near MEASURED EXPECTED: within 4%
  [ $(( ($1 - $2) * 100 / $2 )) -le 4 ] && [ $(( ($2 - $1) * 100 / $2 )) -le 4 ] ||
    { echo "measured $1, expected $2" >&2; return 1; }
}

BEGIN_ONLY='probe begin { println(HZ()) exit() }'
BOTH_SIDES='probe begin { printf("begin %d\n", HZ()) } probe timer.profile { printf("kernel %d\n", HZ()); exit() }'

"$UKSTAP" -e "$BEGIN_ONLY" > "$T_TMP/hz.out" 2> "$T_TMP/hz.err"
HZ_BEGIN=$(cat "$T_TMP/hz.out")
RATE=$(jiffies_rate)
t "HZ() in a begin-only script: the jiffies rate ($RATE/s measured)" 0 '' '' -- near "$RATE" "${HZ_BEGIN:-1}"
if [ -n "$CONFIG_HZ" ]; then
  t "HZ() in a begin-only script: CONFIG_HZ ($CONFIG_HZ)" 0 "$CONFIG_HZ"$'\n' '' -- "$UKSTAP" -e "$BEGIN_ONLY"
else
  t_skip "no kernel configuration readable (CONFIG_HZ unknown)"
fi
t "HZ(): the native and the BPF side agree" 0 "begin $HZ_BEGIN"$'\n'"kernel $HZ_BEGIN"$'\n' '' -- "$UKSTAP" -e "$BOTH_SIDES"
sleep 30 & SLEEPER=$!
t "target(): the native and the BPF side agree (-x)" 0 "$SLEEPER"$'\n'"$SLEEPER"$'\n' '' -- \
  "$UKSTAP" -x "$SLEEPER" -e 'probe begin { println(target()) } probe timer.profile { println(target()); exit() }'
kill "$SLEEPER" 2> /dev/null; wait "$SLEEPER" 2> /dev/null

# Another HZ, in a mount namespace of its own (nothing outside it sees the file).
if [ -n "$CONFIG_HZ" ] && command -v unshare > /dev/null &&
   unshare -m sh -c 'mount -t tmpfs ukstap-hz /boot' 2> /dev/null; then
  OTHER=1000; [ "$CONFIG_HZ" = 1000 ] && OTHER=250
  kconfig_text | sed "s/^CONFIG_HZ=.*/CONFIG_HZ=$OTHER/" > "$T_TMP/config"
  in_other_kernel() {
    unshare -m sh -c 'mount -t tmpfs ukstap-hz /boot && cp "$1" "/boot/config-$2" && shift 2 && exec "$@"' \
      sh "$T_TMP/config" "$REL" "$@"
  }
  t "HZ() in a begin-only script follows CONFIG_HZ=$OTHER" 0 "$OTHER"$'\n' '' -- in_other_kernel "$UKSTAP" -e "$BEGIN_ONLY"
  t "HZ() with CONFIG_HZ=$OTHER: both sides agree" 0 "begin $OTHER"$'\n'"kernel $OTHER"$'\n' '' -- \
    in_other_kernel "$UKSTAP" -e "$BOTH_SIDES"
else
  t_skip "no kernel configuration or no mount namespaces: another HZ not simulated"
fi

# A verifier refusal names the probe whose program failed, whatever else libbpf's messages
# mention first: under -vvv libbpf reports the CO-RE relocations of the timer.profile probe
# (pgrp() reads task_struct by CO-RE) before the syscall probe's failure. The register in the
# reason is clang's choice (R1 while the probe prologue was inlined, R3 since it is a subprogram).
REJECTED='function bad:long () %{ STAP_RETURN(*(volatile long *)8); %}
probe timer.profile { if (pid() == 1) println(pgrp()) } probe syscall.getpid { a = bad(); println(a) }'
for v in "" -v -vvv; do
  t "verifier refusal${v:+ ($v)}: the rejected probe is named" 1 '' \
    '~^ukstap: the BPF verifier rejected probe kernel.trace\("syscalls:sys_enter_getpid"\) \(syscall.getpid\) at <input>:2:63: R[0-9] invalid mem access '"'scalar'"'$' \
    -- "$UKSTAP" $v -g -e "$REJECTED"
done
t_done
