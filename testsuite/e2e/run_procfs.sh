#!/bin/bash
# procfs("NAME").read probes (stapprobes PROCFS, as SystemTap's BPF runtime serves them: FIFOs in
# /var/tmp/systemtap-USER/MODULE/) and the prometheus and json tapsets built on them.
#
# Truths: a program's getpid() calls (137 by construction, strace's count) and its pid (the prometheus line),
# seq (a $value past MAXSTRINGLEN), stat (the modes stapprobes documents: 0400 files, a 0700
# directory), ls (nothing left after exit). Root only; under CI=true not being root fails.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
cd "$T_TMP" || exit 1

MOD=ukstap_e2e_procfs_$$
DIR=/var/tmp/systemtap-$(id -un)/$MOD
UK_PID=
start() {  # start SCRIPT: ukstap in the background, until its FIRST file ($2) is there
  "$UKSTAP" -m "$MOD" -o run.out -e "$1" 2> run.err &
  UK_PID=$!
  for _ in $(seq 600); do
    [ -p "$DIR/$2" ] && return 0
    kill -0 "$UK_PID" 2> /dev/null || break
    sleep 0.1
  done
  echo "ukstap did not make $DIR/$2:" >&2; cat run.err >&2; return 1
}
stop() { kill -INT "$UK_PID" 2> /dev/null; wait "$UK_PID"; }
same() { cmp -s "$2" "$3" || { echo "$1 differ:" >&2; diff "$2" "$3" >&2; return 1; }; }
check() { local d=$1; shift; t "$d" 0 '' '' -- "$@"; }

# ------------------------------------------------------------------ prometheus: syscall counts
printf '#include <stdio.h>\n#include <sys/syscall.h>\n#include <unistd.h>\nint main(void) {\n  for (int i = 0; i < 136; i++) syscall(SYS_getpid);\n  printf("%%ld\\n", syscall(SYS_getpid));\n  return 0;\n}\n' > getpid_loop.c
t_build "getpid_loop" gcc -O0 -o getpid_loop getpid_loop.c || { t_done; exit; }
check "strace: the program makes 137 getpid() calls" \
  sh -c '[ "$(strace -qq -e trace=getpid ./getpid_loop 2>&1 >/dev/null | grep -c "^getpid()")" = 137 ]'
start 'global calls
probe kernel.trace("syscalls:sys_enter_getpid") { if (execname() == "getpid_loop") calls[pid()]++ }
probe prometheus { @prometheus_dump_array1(calls, "getpid_calls", "pid") }' __prometheus
# The program makes 137 getpid() calls and prints its pid; strace (another run) counts them.
./getpid_loop > loop.out
printf 'getpid_calls{pid="%s"} 137\n' "$(cat loop.out)" > want.prom
timeout 20 cat "$DIR/__prometheus" > got.all
grep -F "pid=\"$(cat loop.out)\"" got.all > got.prom
check "probe prometheus: the program's 137 getpid() calls, labelled with its pid" \
  same "the metric line" want.prom got.prom
check "every line has the exposition format" \
  sh -c '! grep -Evq "^getpid_calls\\{pid=\"[0-9]+\"\\} [0-9]+\$" got.all'
check "the file is a FIFO, mode 0400, in a 0700 directory (stapprobes PROCFS)" \
  sh -c "[ \"\$(stat -c '%F %a' '$DIR/__prometheus') \$(stat -c '%a %U' '$DIR')\" = 'fifo 400 700 $(id -un)' ]"
stop
check "the directory is removed at exit" sh -c "[ ! -e '$DIR' ]"

# ------------------------------------------- every read runs the probe; procfs.read = "command"
start 'global n
probe procfs.read { n++; $value = sprintf("read %d\n", n) }
probe procfs("big").read.maxsize(4096) { for (i = 1; i <= 300; i++) $value .= sprintf("%d\n", i) }' command
timeout 20 cat "$DIR/command" > r1
timeout 20 cat "$DIR/command" > r2
printf 'read 1\n' > w1; printf 'read 2\n' > w2
check "procfs.read is the file \"command\"; the first read runs the probe once" same read w1 r1
check "a second read runs it again" same read w2 r2
timeout 20 cat "$DIR/big" > big.out
seq 300 > want.big  # 1092 bytes, past MAXSTRINGLEN (512)
check ".read.maxsize(4096): \$value .= past MAXSTRINGLEN" same '$value' want.big big.out
kill -STOP "$UK_PID"  # a reader that opens the file while ukstap is not serving...
timeout 30 cat "$DIR/command" > late.out &
CAT_PID=$!
# ...and is waiting in that open (the kernel's wchan: a FIFO's open for reading waits for a
# writer) before ukstap goes on: after a fixed 0.5 s a cat not yet started on a loaded machine
# would open the file after the exit removed it (ENOENT, status 1), a failure of the test's.
waiting_reader() {
  local c
  c=$(pgrep -P "$CAT_PID" -x cat) && [ "$(cat "/proc/$c/wchan" 2> /dev/null)" = wait_for_partner ]
}
for _ in $(seq 600); do waiting_reader && break; sleep 0.05; done
kill -CONT "$UK_PID"
kill -INT "$UK_PID"   # ...and ukstap exits before a round serves it (or just after)
wait "$UK_PID"
wait "$CAT_PID"
check "a reader waiting at exit is let go (cat ends, exit status 0)" sh -c "[ $? = 0 ]"

# ------------------------------------------------------------------ json tapset: data, metadata
# Truth: python3's json module parses both files; the values are the ones the script wrote, the
# metadata what json_add_* declared (the layout SystemTap's json tapset documents).
start 'global n
probe json_data {
  n++
  @json_output_data_start
  @json_output_numeric_value("reads", n)
  @json_output_string_value("who", "e2e")
  foreach (k in keys+) {
    @json_output_array_numeric_value("dev", k, "count", keys[k])
    @json_output_array_string_value("dev", k, "label", "L" . k)
  }
  @json_output_data_end
}
global keys
probe begin {
  keys["a"] = 3; keys["b"] = 5
  json_set_prefix("e2e")
  json_add_numeric_metric("reads", "data.json reads", "count")
  json_add_string_metric("who", "")
  json_add_array("dev", "per key")
  json_add_array_numeric_metric("dev", "count", "a number", "")
  json_add_array_string_metric("dev", "label", "a label")
}' data.json
timeout 20 cat "$DIR/data.json" > d1.json
timeout 20 cat "$DIR/data.json" > d2.json
timeout 20 cat "$DIR/metadata.json" > meta.json
stop
cat > want.py <<'PY'
import json, sys
d1, d2, meta = (json.load(open(f)) for f in ("d1.json", "d2.json", "meta.json"))
dev = [{"__id": "a", "count": 3, "label": "La"}, {"__id": "b", "count": 5, "label": "Lb"}]
assert d1 == {"reads": 1, "who": "e2e", "dev": dev}, d1
assert d2["reads"] == 2, d2
assert meta["prefix"] == "e2e", meta
m = {x["name"]: x for x in meta["metrics"]}
assert m["reads"] == {"name": "reads", "pointer": "/reads", "type": "integer",
                      "description": "data.json reads", "units": "count"}, m["reads"]
assert m["who"] == {"name": "who", "pointer": "/who", "type": "string"}, m["who"]
assert m["dev"]["type"] == "array" and m["dev"]["index"] == "/__id", m["dev"]
sub = {x["name"]: x for x in m["dev"]["metrics"]}
assert sub == {"count": {"name": "count", "pointer": "/count", "type": "integer",
                         "description": "a number"},
               "label": {"name": "label", "pointer": "/label", "type": "string",
                         "description": "a label"}}, sub
PY
check "json tapset: data.json and metadata.json parse and hold what the script declared" \
  python3 want.py

# argv (the json examples fill in a default device): the command line's arguments.
t "argc and argv[] are the script's arguments" 0 $'2 [a] [b c] []\n' '' -- \
  "$UKSTAP" -e 'probe begin { printf("%d [%s] [%s] [%s]\n", argc, argv[1], argv[2], argv[3]); exit() }' a 'b c'

# ------------------------------------------------------------------------------------- .write
# Truth: what the shell wrote, in the order it wrote it; the file's mode 0200 (stapprobes).
t "two .write probes on one file are refused" 1 '' '~more than one' -- timeout 60 "$UKSTAP" -m "$MOD" -o wr.out \
  -e 'probe procfs("in").write { printf("got [%s]\n", $value) }
probe procfs("in").write { printf("got [%s]\n", $value) }'
start 'probe procfs("in").write { printf("got [%s]\n", $value); if ($value == "last\n") exit() }' in
check ".write file: mode 0200" sh -c "[ \"\$(stat -c '%a' '$DIR/in')\" = 200 ]"
echo first > "$DIR/in"
for _ in $(seq 300); do grep -q first run.out && break; sleep 0.1; done
echo last > "$DIR/in"
wait "$UK_PID"
t ".write: \$value is what each writer wrote" 0 $'got [first\n]\ngot [last\n]\n' '' -- cat run.out

# ---------------------------------------------------------------------------- refusals, one line
mkdir -p "$(dirname "$DIR")" && mkdir "$DIR"
t "a directory already there is not used" 1 '' \
  "~^ukstap: the procfs directory $DIR already exists" \
  -- "$UKSTAP" -m "$MOD" -e 'probe procfs.read { $value = "x" } probe timer.s(5) { exit() }'
rmdir "$DIR"
t "a name with a '/' is refused" 1 '' "~must be a plain file name" \
  -- "$UKSTAP" -p2 -e 'probe procfs("../x").read { $value = "x" }'
t_done
