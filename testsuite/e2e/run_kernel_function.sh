#!/bin/bash
# kernel.function probes typed by BTF (probes/kernel_function_family.cpp): points, -l/-L, the
# one-line errors, and — on a kernel that can attach them (kprobes or BPF trampolines, e.g. the
# 6.1 test-bed guest) — the values, through both programs (fentry/fexit and kprobe/kretprobe,
# the second forced with -D KERNEL_FUNCTION_MECHANISM=kprobe).
#
# Truths from outside the code under test:
#  - names and parameters: bpftool's dump of the kernel's BTF (FUNC and FUNC_PROTO records),
#    /proc/kallsyms (a listed function is a text symbol);
#  - values: strace of the traced program (a copy of cat named kfdd, so its comm is its own):
#    each read(2)/pread64(2) of it is one vfs_read call with $count = the size asked and
#    $return = the result strace shows; each openat(2) is one do_sys_openat2 with $filename =
#    the path strace shows; bpftrace's kprobe on vfs_read (its own count and sum of arg2);
#  - on a kernel without kprobes and trampolines (this project's 6.18 build machine): what its
#    tracefs lacks (no kprobe_events), and the -c command never runs (nothing attached).
# Root only; under CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
TRACEFS=/sys/kernel/tracing
[ -d "$TRACEFS/events" ] || TRACEFS=/sys/kernel/debug/tracing

# --- points and -l/-L: BTF only, any kernel --------------------------------------------------
BTFDUMP=$T_TMP/btf.txt
bpftool btf dump file /sys/kernel/btf/vmlinux > "$BTFDUMP"
# "NAME: p1 p2 ..." of a BTF function, from bpftool's FUNC -> FUNC_PROTO records.
btf_params() {
  local proto
  proto=$(sed -n "s/^\[[0-9]*\] FUNC '$1' type_id=\([0-9]*\) .*/\1/p" "$BTFDUMP")
  awk -v want="[$proto]" '
    $1 == want { on = 1; next }
    on && /^\t/ { gsub("\x27", "", $1); printf " $%s", $1; next }
    on { exit }' "$BTFDUMP"
}
VFS_READ_PARAMS=$(btf_params vfs_read)
t "bpftool knows vfs_read's parameters" 0 '~^ \$[a-z]' '' -- echo "$VFS_READ_PARAMS"
# -L: the point, then "$name:type" per parameter, in BTF's order (names from bpftool).
t "-L kernel.function(\"vfs_read\") lists BTF's parameters in order" 0 \
  "~^kernel\\.function\\(\"vfs_read\"\\)$(echo "$VFS_READ_PARAMS" | sed 's/ \$\([a-z_0-9]*\)/ \\$\1:[^$]+/g')\$" '' -- \
  "$UKSTAP" -L 'kernel.function("vfs_read")'
t "-L .return adds \$return (ssize_t)" 0 '~ \$return:ssize_t$' '' -- \
  "$UKSTAP" -L 'kernel.function("vfs_read").return'
# -l with a glob: every name is a BTF FUNC and a text symbol in /proc/kallsyms; vfs_read is one.
"$UKSTAP" -l 'kernel.function("vfs_rea*")' > "$T_TMP/l" 2> "$T_TMP/l.err"
t "-l kernel.function(\"vfs_rea*\") includes vfs_read" 0 '*' '' -- grep -qx 'kernel.function("vfs_read")' "$T_TMP/l"
bad=
while read -r line; do
  f=${line#kernel.function(\"}; f=${f%\")}
  [[ $f == vfs_rea* ]] || bad+=" $f(glob)"
  grep -q "FUNC '$f' " "$BTFDUMP" || bad+=" $f(BTF)"
  grep -Eq " [tT] $f( |\$)" /proc/kallsyms || bad+=" $f(kallsyms)"
done < "$T_TMP/l"
t "-l glob: every name matches, is in BTF and kallsyms" 0 '' '' -- echo -n "$bad"
t "unknown function: one line with suggestions" 1 '' \
  "~^semantic error: no kernel function 'vfs_raed' in the kernel's BTF \\(similar: [^)]*vfs_read[^)]*\\): " -- \
  "$UKSTAP" -p2 -e 'probe kernel.function("vfs_raed") { next }'
t "FUNCTION@FILE:LINE: one line saying why" 1 '' \
  '~^semantic error: .vfs_read@fs/read_write.c:1.: FUNCTION@FILE\[:LINE\] needs the kernel.s debuginfo' -- \
  "$UKSTAP" -p2 -e 'probe kernel.function("vfs_read@fs/read_write.c:1") { next }'
t "a member BTF does not have: one line with similar members" 1 '' \
  "~^semantic error: struct file has no member 'f_nope' \\(similar: " -- \
  "$UKSTAP" -p2 -e 'probe kernel.function("vfs_read") { println($file->f_nope) }'
# Passes 1-2 ask the kernel nothing that loads a program (the trampoline check is pass 3's).
t "-p2 makes no bpf() call (strace)" 0 '' '' -- bash -c "
  strace -f -qq -e trace=bpf -o '$T_TMP/p2.strace' '$UKSTAP' -p2 -e 'probe kernel.function(\"vfs_read\") {}' > /dev/null &&
  ! grep 'bpf(' '$T_TMP/p2.strace'"
t "a parameter in a kretprobe: write @entry" 1 '' '~write @entry\(\$count\)' -- \
  "$UKSTAP" -p2 -D KERNEL_FUNCTION_MECHANISM=kprobe -e 'probe kernel.function("vfs_read").return { println($count) }'
t "\$\$parms in a kretprobe: refused, not an empty string" 1 '' \
  "~^semantic error: '\\\$\\\$parms' in a kretprobe: the argument registers are gone at return" -- \
  "$UKSTAP" -p3 -D KERNEL_FUNCTION_MECHANISM=kprobe -e 'probe kernel.function("vfs_read").return { println($$parms) }'

# The traced program and its truth.
cp /bin/dd "$T_TMP/kfdd"
printf 'hello kernel function\n' > "$T_TMP/in1"
head -c 70000 /dev/zero > "$T_TMP/in2"
# dd reads in2 by 1000 bytes (70 reads and the one that finds its end), in1 whole, and fails to
# open /nonexistent; its output and messages go to /dev/null (not into ukstap's output).
cat > "$T_TMP/kfdd.sh" <<EOF
$T_TMP/kfdd if=$T_TMP/in2 of=/dev/null bs=1000 2>/dev/null
$T_TMP/kfdd if=$T_TMP/in1 of=/dev/null 2>/dev/null
$T_TMP/kfdd if=/nonexistent 2>/dev/null
true
EOF
# One script for every value check; its output is compared line by line with strace's.
SCRIPT=$T_TMP/kf.stp
cat > "$SCRIPT" <<'EOF'
probe kernel.function("vfs_read") {
  if (execname() == "kfdd")
    printf("R %d %s %s %d\n", $count, probefunc(), kernel_string($file->f_path->dentry->d_name->name),
           $file->f_inode->i_ino == @cast($file, "file")->f_inode->i_ino)
}
probe kernel.function("vfs_read").return {
  if (execname() == "kfdd") printf("RET %d %d\n", @entry($count), $return)
}
probe kernel.function("do_sys_openat2") {
  if (execname() == "kfdd") printf("O %s\n", user_string($filename))
}
probe kernel.function("vfs_read") {
  if (execname() == "kfdd" && !done++) printf("P %s|%s|%s|%s\n", $$parms, $$locals, @cast(task_current(), "task_struct")->comm,
                                          kernel_string(&@cast(task_current(), "task_struct")->comm[0]))
}
global done
EOF
# ukstap's lines from strace's log (-o): the same forms.
# Only the lines of processes once they run kfdd (strace -f also follows the shell).
strace_truth() {
  perl -ne '
    $kf{$1} = 1 if /^(\d+) +execve\("[^"]*\/kfdd"/;
    next unless /^(\d+) / && $kf{$1};
    if (/^\d+ +read\(\d+<([^>]*)>, .*, (\d+)\) += (-?\d+)/ || /^\d+ +pread64\(\d+<([^>]*)>, .*, (\d+), \d+\) += (-?\d+)/) {
      my ($path, $c, $r) = ($1, $2, $3); $path =~ s{.*/}{};
      print "R $c vfs_read $path 1\n"; push @r, "RET $c $r\n"; next }
    print "O $1\n" if /^\d+ +openat\([^"]*"((?:[^"\\]|\\.)*)"/;
    END { print @r }' "$1"
}
# Order: a read's return comes before the next read; compare the three kinds separately.
split_lines() { grep -a "^$2 " "$1"; }

if [ ! -e "$TRACEFS/kprobe_events" ] && ! bpftrace -e 'kfunc:vfs_read { exit() }' -c true > /dev/null 2>&1; then
  # --- a kernel that attaches neither: pass 5 fails with one line, the command never runs.
  t "pass 4 compiles (fentry)" 0 '~\.bpf\.o$' '' -- "$UKSTAP" -p4 "$SCRIPT"
  t "pass 4 compiles (kprobe)" 0 '~\.bpf\.o$' '' -- "$UKSTAP" -p4 -D KERNEL_FUNCTION_MECHANISM=kprobe "$SCRIPT"
  t "-v says no program can attach, and why (pass 3, where it asks the kernel)" 0 '*' \
    '~^kernel\.function probes: none can attach; no BPF trampolines \(fentry/fexit need CONFIG_FUNCTION_TRACER' -- \
    "$UKSTAP" -v -p3 "$SCRIPT"
  "$UKSTAP" "$SCRIPT" -c "touch $T_TMP/ran" > "$T_TMP/p5.out" 2> "$T_TMP/p5.err"
  echo "exit $?" >> "$T_TMP/p5.out"
  t "pass 5 fails (exit 1, nothing on stdout)" 0 $'exit 1\n' '' -- cat "$T_TMP/p5.out"
  t "pass 5: one line naming CONFIG_KPROBES and the trampolines' options" 0 '*' '' -- grep -Eq \
    "^ukstap: cannot run probe kernel\\.function\\(\"vfs_read\"\\) at [^ ]*kf\\.stp:1:7: this kernel has no kprobes \\(CONFIG_KPROBES[^)]*\\) and no BPF trampolines \\(.*CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS" "$T_TMP/p5.err"
  t "  ...exactly one such line" 0 $'1\n' '' -- grep -c 'cannot run' "$T_TMP/p5.err"
  t "  ...the -c command never ran" 1 '' '' -- test -e "$T_TMP/ran"
  t "forcing kprobes names CONFIG_KPROBES alone" 1 '' \
    '~: this kernel has no kprobes \(CONFIG_KPROBES: tracefs has no kprobe_events' -- \
    "$UKSTAP" -D KERNEL_FUNCTION_MECHANISM=kprobe "$SCRIPT" -c true
  t_done
  exit
fi

# --- a kernel with kprobes and trampolines (the 6.1 guest) -----------------------------------
# A module's function: the test bed's root is an overlayfs (module overlay, with BTF), so every
# read of a file there goes through ovl_read_iter, and reads of other file systems do not. Its -L
# against bpftool's dump of the module's split BTF.
if [ -e /sys/kernel/btf/overlay ] && [ "$(stat -f -c %T /)" = overlayfs ]; then
  # (appended: a module function's prototype may be in vmlinux's part, BTF dedup shares it)
  bpftool -B /sys/kernel/btf/vmlinux btf dump file /sys/kernel/btf/overlay >> "$BTFDUMP"
  OVL_PARAMS=$(btf_params ovl_read_iter)
  t "bpftool knows overlay's ovl_read_iter" 0 '~^ \$[a-z]' '' -- echo "$OVL_PARAMS"
  t "-L module(\"overlay\").function(\"ovl_read_iter\") lists its BTF parameters" 0 \
    "~^module\\(\"overlay\"\\)\\.function\\(\"ovl_read_iter\"\\)$(echo "$OVL_PARAMS" | sed 's/ \$\([a-z_0-9]*\)/ \\$\1:[^$]+/g')\$" '' -- \
    "$UKSTAP" -L 'module("overlay").function("ovl_read_iter")'
  cat >> "$SCRIPT" <<'EOF'
probe module("overlay").function("ovl_read_iter") {
  if (execname() == "kfdd") printf("M %s\n", kernel_string($iocb->ki_filp->f_path->dentry->d_name->name))
}
EOF
  HAVE_OVL=1
else
  t_skip "module(\"overlay\").function: the root is not an overlayfs with module BTF"
  HAVE_OVL=0
fi
run_values() {  # run_values LABEL [UKSTAP ARGS...]
  local label=$1; shift
  rm -f "$T_TMP/strace.log"
  "$UKSTAP" -v "$@" "$SCRIPT" -c "strace -f -qq -y -e trace=execve,read,pread64,openat -o $T_TMP/strace.log sh $T_TMP/kfdd.sh" \
    > "$T_TMP/vals.$label" 2> "$T_TMP/vals.$label.err"
  strace_truth "$T_TMP/strace.log" > "$T_TMP/truth.$label"
  # M: the reads of files on an overlayfs (stat -f's file system type of each path strace shows)
  perl -ne '$kf{$1} = 1 if /^(\d+) +execve\("[^"]*\/kfdd"/; next unless /^(\d+) / && $kf{$1};
    next unless /^\d+ +p?read(?:64)?\(\d+<([^>]*)>/; my $p = $1;
    $fs{$p} //= `stat -f -c %T -- \Q$p\E 2>/dev/null`; next unless $fs{$p} =~ /^overlayfs/;
    $p =~ s{.*/}{}; print "M $p\n"' \
    "$T_TMP/strace.log" >> "$T_TMP/truth.$label"
  for k in R RET O $([ $HAVE_OVL = 1 ] && echo M); do
    split_lines "$T_TMP/vals.$label" "$k" > "$T_TMP/got.$label.$k"
    split_lines "$T_TMP/truth.$label" "$k" > "$T_TMP/want.$label.$k"
    t "$label: '$k' lines = strace's ($(wc -l < "$T_TMP/want.$label.$k") of them)" 0 '' '' -- \
      diff "$T_TMP/want.$label.$k" "$T_TMP/got.$label.$k"
  done
  # $$parms: "name=0x..." per BTF parameter, in order; $$locals is "" (BTF has no locals);
  # a char array (task_struct's comm) as a string and through kernel_string(&...[0]).
  t "$label: \$\$parms has BTF's parameters as name=0x..." 0 \
    "~^P $(echo "$VFS_READ_PARAMS" | sed 's/^ //; s/\$\([a-z_0-9]*\)/\1=0x[0-9a-f]+/g')\\|\\|kfdd\\|kfdd\$" '' -- \
    grep -a '^P ' "$T_TMP/vals.$label"
}
run_values fentry
t "fentry: -v says fentry/fexit" 0 '~^kernel\.function probes: fentry/fexit \(BPF trampolines\)$' '' -- cat "$T_TMP/vals.fentry.err"
run_values kprobe -D KERNEL_FUNCTION_MECHANISM=kprobe
t "kprobe: -v says kprobe/kretprobe, forced" 0 '~^kernel\.function probes: kprobe/kretprobe, forced by -D KERNEL_FUNCTION_MECHANISM=kprobe$' '' -- cat "$T_TMP/vals.kprobe.err"
# The openat of /nonexistent fails: strace shows it, and do_sys_openat2 ran for it.
t "the failed open of /nonexistent was seen" 0 '*' '' -- grep -qx 'O /nonexistent' "$T_TMP/got.fentry.O"

# bpftrace's own kprobe on vfs_read, for the same kind of run: its count and sum of arg2 equal
# ukstap's (both filtered by the comm).
BT=$T_TMP/bt.out
bpftrace -e 'kprobe:vfs_read /comm == "kfdd"/ { @n = count(); @s = sum(arg2); }' -c "/bin/sh $T_TMP/kfdd.sh" > "$BT" 2>&1
bt_n=$(sed -n 's/^@n: //p' "$BT"); bt_s=$(sed -n 's/^@s: //p' "$BT")
t "bpftrace saw reads" 0 '~^[1-9]' '' -- echo "$bt_n"
[ -n "$bt_n" ] || sed 's/^/  bpftrace: /' "$BT"
t "count and \$count sum = bpftrace's kprobe count and sum(arg2)" 0 "$bt_n $bt_s"$'\n' '' -- \
  "$UKSTAP" -e 'global n, s
    probe kernel.function("vfs_read") { if (execname() == "kfdd") { n++; s += $count } }
    probe end { printf("%d %d\n", n, s) }' -c "sh $T_TMP/kfdd.sh"
t_done
