#!/bin/bash
# Root never trusts a cache file it does not own (loader/owned_files.h, module_sum.h,
# table_cache.h, vmlinux_btf_id.h).
#
# A planted native module (a .so whose constructor writes a marker file) is put where a root
# ukstap would look for its cached module: in a cache directory another user owns (as under
# `sudo -E`, HOME or XDG_CACHE_HOME the invoking user's), in a group/world-writable one, as a
# symlink, as different bytes. Truth: the marker file (the planted code ran or not) and find(1)
# (what root created where). Each time ukstap must warn once, naming the path, not run the
# planted code, and still run the script.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

SCRIPT='probe begin { println("hi") exit() }'
MARKER="$T_TMP/marker"
cat > "$T_TMP/planted.c" <<EOC
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) {
  char b[64];
  int fd = open("$MARKER", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    int n = snprintf(b, sizeof b, "euid=%d\n", (int)geteuid());
    write(fd, b, n);
    close(fd);
  }
}
EOC
t_build "the planted module" gcc -shared -fPIC -o "$T_TMP/planted.so" "$T_TMP/planted.c" || { t_done; exit; }

# Where the module of SCRIPT lies under a cache root: ukstap/<key>/<name>.so (-p4 prints it).
XDG_CACHE_HOME="$T_TMP/ref" "$UKSTAP" -p4 -e "$SCRIPT" > "$T_TMP/ref.path" 2> "$T_TMP/ref.err"
REL=$(sed -n "s|^$T_TMP/ref/||p" "$T_TMP/ref.path")
t "the module's place in the cache" 0 '' '' -- bash -c "[[ '$REL' == ukstap/*/*.so ]]"

# plant DIR: DIR/$REL is the planted module (its directories made as they are).
plant() {
  mkdir -p "$1/$(dirname "$REL")"
  cp "$T_TMP/planted.so" "$1/$REL"
}
# run_case NAME WARNING-REGEX ENV...: the script runs (exit 0, "hi"), the planted code does not,
# and stderr is exactly one WARNING line matching the regex.
run_case() {
  local name=$1 warn=$2; shift 2
  rm -f "$MARKER"
  t "$name: the script runs, with a warning" 0 $'hi\n' "~^WARNING: $warn" -- \
    env "$@" "$UKSTAP" -e "$SCRIPT"
  cp "$T_TMP/err" "$T_TMP/case.err"
  t "$name: one warning line, nothing else" 0 '' '' -- \
    bash -c "[ \"\$(wc -l < '$T_TMP/case.err')\" = 1 ] && grep -q '^WARNING: ' '$T_TMP/case.err'"
  t "$name: the planted module did not run" 0 '' '' -- test ! -e "$MARKER"
}

# --- a cache directory another user owns (XDG_CACHE_HOME, then HOME as sudo -E leaves it) -----
E="$T_TMP/nobody-xdg"
plant "$E"
chown -R nobody:nogroup "$E"
run_case "XDG_CACHE_HOME owned by nobody" \
  "not using the cache directory $E/ukstap: $E is owned by uid $(id -u nobody)" XDG_CACHE_HOME="$E"
t "XDG_CACHE_HOME owned by nobody: root created nothing in it" 0 '' '' -- \
  bash -c "[ -z \"\$(find '$E' ! -user nobody)\" ]"

H="$T_TMP/nobody-home"
plant "$H/.cache"
chown -R nobody:nogroup "$H"
run_case "HOME owned by nobody (sudo -E)" \
  "not using the cache directory $H/.cache/ukstap: $H is owned by uid $(id -u nobody)" \
  -u XDG_CACHE_HOME HOME="$H"
t "HOME owned by nobody: root created nothing in it" 0 '' '' -- \
  bash -c "[ -z \"\$(find '$H' ! -user nobody)\" ]"

# --- root's own directories, but writable by group or others ------------------------------
W="$T_TMP/world"
plant "$W"
chmod 0777 "$W/ukstap"
chown nobody "$W/$REL"
run_case "a world-writable cache directory" \
  "not using the cache directory $W/ukstap: $W/ukstap is writable by group or others" XDG_CACHE_HOME="$W"

G="$T_TMP/group"
plant "$G"
chmod 0700 "$G/ukstap"
chmod 0775 "$G/$(dirname "$REL")"
run_case "a group-writable module directory" \
  "not using the cache directory $G/ukstap: $G/$(dirname "$REL") is writable by group or others" \
  XDG_CACHE_HOME="$G"

L="$T_TMP/link"
mkdir -m 0700 "$L"
ln -s "$E/ukstap" "$L/ukstap"
run_case "the cache directory a symlink to another user's" \
  "not using the cache directory $L/ukstap: $L/ukstap is a symbolic link" XDG_CACHE_HOME="$L"

# --- a private cache whose module file is a symlink, or not the bytes compiled -------------
P="$T_TMP/private"
XDG_CACHE_HOME="$P" "$UKSTAP" -e "$SCRIPT" > /dev/null 2>&1
t "private cache: the module is cached" 0 '' '' -- test -f "$P/$REL"
rm -f "$P/$REL"
ln -s "$T_TMP/planted.so" "$P/$REL"
run_case "a symlinked cache file" "not using the cached module: $P/$REL is a symbolic link" \
  XDG_CACHE_HOME="$P"
t "a symlinked cache file: replaced by a private regular file" 0 '' '' -- \
  bash -c "[ ! -L '$P/$REL' ] && [ \"\$(stat -c '%u %a %F' '$P/$REL')\" = '0 600 regular file' ]"
t "a symlinked cache file: the next run uses the cache, silently" 0 $'hi\n' '' -- \
  env XDG_CACHE_HOME="$P" "$UKSTAP" -e "$SCRIPT"

Q="$T_TMP/private2"
XDG_CACHE_HOME="$Q" "$UKSTAP" -e "$SCRIPT" > /dev/null 2>&1
cat "$T_TMP/planted.so" > "$Q/$REL"  # same inode, owner and mode: only the bytes differ
t "private cache: the module file is root's, 0600" 0 $'0 600 regular file\n' '' -- stat -c '%u %a %F' "$Q/$REL"
run_case "a cached module with other bytes" \
  "not using the cached module: $Q/$REL does not match the hash recorded" XDG_CACHE_HOME="$Q"

# --- TMPDIR another user owns: root compiles elsewhere (nobody could swap the objects there) -
N="$T_TMP/nobody-tmp"
mkdir "$N" && chown nobody "$N"
t "TMPDIR owned by nobody: the script runs, with one warning" 0 $'hi\n' \
  "WARNING: not using TMPDIR=$N: $N is owned by uid $(id -u nobody), neither root nor uid 0; using /tmp"$'\n' -- \
  env XDG_CACHE_HOME="$T_TMP/tmpdir-cache" TMPDIR="$N" "$UKSTAP" -e "$SCRIPT"

# --- cached unwind tables another user owns (or may write): read by no one, replaced -----
TC="$T_TMP/tables"
USTACK='probe syscall.getppid { if (pid() == target()) print_ubacktrace() }'
XDG_CACHE_HOME="$TC" "$UKSTAP" -e "$USTACK" -c /bin/true > /dev/null 2>&1
t "unwind tables: cached" 0 '' '' -- bash -c "[ -n \"\$(find '$TC/ukstap/cfi' -name '*.cfi')\" ]"
find "$TC/ukstap/cfi" -name '*.cfi' -exec chown nobody {} +
t "unwind tables owned by nobody: the run warns" 0 '' \
  "~^WARNING: not using the cached unwind table: $TC/ukstap/cfi/.* is owned by uid $(id -u nobody)" -- \
  env XDG_CACHE_HOME="$TC" "$UKSTAP" -e "$USTACK" -c /bin/true
cp "$T_TMP/err" "$T_TMP/case.err"
t "unwind tables owned by nobody: one warning line, nothing else" 0 '' '' -- \
  bash -c "[ \"\$(wc -l < '$T_TMP/case.err')\" = 1 ]"
t "unwind tables owned by nobody: all replaced by root's own 0600 files" 0 '' '' -- \
  bash -c "[ -z \"\$(find '$TC/ukstap/cfi' -name '*.cfi' ! -user root -o -name '*.cfi' ! -perm 0600)\" ]"

# --- the kernel identity memo (kernels/, loader/vmlinux_btf_id.h): it decides which module key
# is served, so a planted memo could serve another kernel's object. A memo not to be trusted
# is read by no one and the BTF hashed again. Truths: sha256sum(1) of the kernel's BTF, stat(1);
# the module -p4 names is the one the first run compiled.
SHA=$(sha256sum < /sys/kernel/btf/vmlinux | cut -c1-64)
XDG_CACHE_HOME="$TC" "$UKSTAP" -p4 -e "$USTACK" > "$T_TMP/tc.path" 2> /dev/null
MEMO=$(find "$TC/ukstap/kernels" -type f)
t "kernel identity memo: one, the BTF's sha256sum, root's 0600" 0 "$SHA 0 600 regular file"$'\n' '' -- \
  bash -c 'echo "$(cat "$0") $(stat -c "%u %a %F" "$0")"' "$MEMO"
# memo_case NAME WARNING-REGEX ("" for none): -p4 serves the first run's module, stderr is that
# warning line alone, and the memo is root's private file of the BTF's sha256sum again.
memo_case() {
  local want_err=''
  [ -n "$2" ] && want_err="~^WARNING: not using the cached kernel identity: $2"
  t "$1: the running kernel's module" 0 "$(cat "$T_TMP/tc.path")"$'\n' "$want_err" -- \
    env XDG_CACHE_HOME="$TC" "$UKSTAP" -p4 -e "$USTACK"
  cp "$T_TMP/err" "$T_TMP/case.err"
  t "$1: $([ -n "$2" ] && echo "one warning line" || echo "silently")" 0 '' '' -- \
    bash -c '[ "$(wc -l < "$0")" = "$1" ]' "$T_TMP/case.err" "$([ -n "$2" ] && echo 1 || echo 0)"
  t "$1: the memo is the BTF's sha256sum again, root's 0600" 0 "$SHA 0 600 regular file"$'\n' '' -- \
    bash -c 'echo "$(cat "$0") $(stat -c "%u %a %F" "$0")"' "$MEMO"
}
OTHER_ID=$(printf '%064d' 0)  # another kernel's identity, as a planted memo would say
printf '%s' "$OTHER_ID" > "$MEMO" && chmod 0666 "$MEMO"
memo_case "a world-writable memo" "$MEMO is writable by group or others"
printf '%s' "$OTHER_ID" > "$MEMO" && chown nobody "$MEMO"
memo_case "a memo owned by nobody" "$MEMO is owned by uid $(id -u nobody)"
printf '%s' "$OTHER_ID" > "$T_TMP/planted.id"
rm -f "$MEMO" && ln -s "$T_TMP/planted.id" "$MEMO"
memo_case "a symlinked memo" "$MEMO is a symbolic link"
printf 'not a sha256\n' > "$MEMO"
memo_case "a private memo that is not 64 hex digits" ""

# --- vmlinux.h (vmlinux/<identity>/): a symlink there is not read by clang; a compile makes it
# again. Truth: bpftool's own dump of the kernel's BTF. (A user's -D: a new module, compiled
# without the precompiled header.)
VH=$(find "$TC/ukstap/vmlinux" -name vmlinux.h)
t "vmlinux.h: in the directory named by the BTF's sha256sum" 0 "${SHA:0:16}"$'\n' '' -- \
  bash -c 'basename "$(dirname "$0")"' "$VH"
printf '#error planted\n' > "$T_TMP/planted.h"
rm -f "$VH" && ln -s "$T_TMP/planted.h" "$VH"
t "a symlinked vmlinux.h: the module compiles, with a warning" 0 '~\.bpf\.o$' \
  "~^WARNING: not using the cached vmlinux.h: $VH is a symbolic link; making it again" -- \
  env XDG_CACHE_HOME="$TC" "$UKSTAP" -p4 -D CACHE_TRUST_VMLINUX=1 -e "$USTACK"
t "a symlinked vmlinux.h: replaced by root's 0600 file, bpftool's dump" 0 $'0 600 regular file\n' '' -- \
  bash -c 'bpftool btf dump file /sys/kernel/btf/vmlinux format c | cmp -s - "$0" && stat -c "%u %a %F" "$0"' "$VH"

t_done
