#!/bin/bash
# One cache shared by two kernels (a home directory on a disk booted by either, a test guest
# given the host's files): a BPF module is compiled against the kernel's vmlinux.h, so the
# module's cache key and vmlinux.h's directory are the kernel's BTF identity, a SHA-256 of its
# bytes (loader/vmlinux_btf_id.h). Before, the key was the generated C, the runtime, the
# compilers and the flags: two kernels generating the same C shared one object.
#
# "Another kernel" is UKSTAP_VMLINUX_BTF=FILE (pass 4 dumps vmlinux.h from FILE and keys the
# cache on it): this kernel's BTF with one more string in its string table, which no type
# names (bpftool dumps the same vmlinux.h from it; the bytes differ).
#
# Truths: a clang that logs each compile it is asked for (-c), find(1) for the cache's module
# and vmlinux.h directories, sha256sum(1) of each BTF file for their names and for the per-boot
# memo of the identity.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

C=$T_TMP/c
SCRIPT='probe syscall.getppid { printf("%d\n", pid()) }'
real_clang=$(command -v clang-14 || command -v clang)
mkdir -p "$T_TMP/bin"
cat > "$T_TMP/bin/clang" << EOF
#!/bin/sh
for a in "\$@"; do [ "\$a" = -c ] && echo compile >> '$T_TMP/compiles'; done
for a in "\$@"; do case \$a in -DSTP_HAVE_RDONLY_CAST*) echo "\$a" >> '$T_TMP/rdonly_cast';; esac; done
exec '$real_clang' "\$@"
EOF
chmod +x "$T_TMP/bin/clang"
: > "$T_TMP/compiles"

# p4 [BTF]: the module's .bpf.o, compiled or taken from the cache, for the kernel whose BTF is
# BTF (the running one's when none). A user's -D: the module is compiled without the
# precompiled vmlinux.h (vmlinux_pch.h), whose making (~0.6 CPU s, once the cache holds two
# other modules) this test does not need.
p4() {
  env XDG_CACHE_HOME="$C" UKSTAP_BPF_CLANG="$T_TMP/bin/clang" ${1:+UKSTAP_VMLINUX_BTF="$1"} \
    "$UKSTAP" -p4 -D UKSTAP_TEST_KERNELS=1 -e "$SCRIPT"
}
# counts: the compiles clang was asked for and the modules in the cache
counts() { echo "$(wc -l < "$T_TMP/compiles") compiles, $(find "$C/ukstap" -name module.sum | wc -l) modules"; }
# vmlinux_dirs: the names of the directories holding a vmlinux.h
vmlinux_dirs() { find "$C/ukstap/vmlinux" -name vmlinux.h -printf '%h\n' | sed 's|.*/||' | sort; }
# memos: the identities kept per boot, one a line
memos() { for f in "$C"/ukstap/kernels/*; do cat "$f"; echo; done | sort; }
# fake_btf OUT WORD: this kernel's BTF with the string WORD appended to its string section
fake_btf() {
  python3 - /sys/kernel/btf/vmlinux "$1" "$2" << 'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
# struct btf_header (uapi linux/btf.h): magic, version, flags, hdr_len, type_off, type_len,
# str_off, str_len; the sections' offsets count from the header's end
magic, _, _, hdr_len, _, _, str_off, str_len = struct.unpack_from('=HBBIIIII', b, 0)
assert magic == 0xeb9f and hdr_len + str_off + str_len == len(b), 'the strings are not last'
s = sys.argv[3].encode() + b'\0'
struct.pack_into('=I', b, 20, str_len + len(s))
open(sys.argv[2], 'wb').write(b + s)
PY
}
sha() { sha256sum < "$1" | cut -c1-64; }
OTHER=$T_TMP/other.btf SAME=$T_TMP/same.btf
fake_btf "$OTHER" ukstap_other_kernel
cp /sys/kernel/btf/vmlinux "$SAME"
S_RUNNING=$(sha /sys/kernel/btf/vmlinux) S_OTHER=$(sha "$OTHER")

# --- one kernel: compiled once, then cached ----------------------------------------------------
t "the running kernel: compiled" 0 '~/stap_.*\.bpf\.o$' '' -- p4
O_RUNNING=$(cat "$T_TMP/out")
t "... then cached (the same object)" 0 "$O_RUNNING"$'\n' '' -- p4
t "... one compile, one module" 0 $'1 compiles, 1 modules\n' '' -- counts

# --- a module without a user-stack walk: the bpf_rdonly_cast probe (5 program loads, for the
# walk's registers: kernel_features.h) is not run, nor its -D passed. Truths: strace(1)'s
# bpf(BPF_PROG_LOAD) calls of the cached run (pass 4 loads nothing else), the compiler's argv.
t "no user-stack walk: the cached run loads no BPF program (strace)" 0 $'0\n' '' -- sh -c '
  strace -f -qq -e trace=bpf -o "$0/strace" "$@" > /dev/null 2>&1 || exit 1
  n=$(grep -c BPF_PROG_LOAD "$0/strace"); echo "$n"' "$T_TMP" env XDG_CACHE_HOME="$C" "$UKSTAP" -p4 -D UKSTAP_TEST_KERNELS=1 -e "$SCRIPT"
t "... nor was it compiled with -DSTP_HAVE_RDONLY_CAST" 0 '' '' -- test ! -e "$T_TMP/rdonly_cast"

# --- another kernel, the same C: compiled again, into another module and beside another vmlinux.h
t "another kernel's BTF (other bytes): compiled" 0 '~/stap_.*\.bpf\.o$' '' -- p4 "$OTHER"
O_OTHER=$(cat "$T_TMP/out")
t "... then cached (the same object)" 0 "$O_OTHER"$'\n' '' -- p4 "$OTHER"
t "... two compiles, two modules" 0 $'2 compiles, 2 modules\n' '' -- counts
t "... in another directory than the running kernel's" 0 '' '' -- \
  test "$(dirname "$O_OTHER")" != "$(dirname "$O_RUNNING")"
t "... one vmlinux.h each, named by the BTF's sha256sum" 0 \
  "$(printf '%s\n' "${S_RUNNING:0:16}" "${S_OTHER:0:16}" | sort)"$'\n' '' -- vmlinux_dirs
t "the running kernel again: its own module, cached" 0 "$O_RUNNING"$'\n' '' -- p4

# --- the identity is the bytes, not the file's name ---------------------------------------------
t "a copy of the running kernel's BTF elsewhere: the running kernel's module" 0 "$O_RUNNING"$'\n' '' -- \
  p4 "$SAME"
t "... still two compiles" 0 $'2 compiles, 2 modules\n' '' -- counts

# --- the per-boot memo: each file's sha256sum, and a file changed in place is hashed again (the
# memo is named by the file's inode, size and times besides the boot)
t "the memos: each BTF file's sha256sum" 0 \
  "$(printf '%s\n' "$S_RUNNING" "$S_RUNNING" "$S_OTHER" | sort)"$'\n' '' -- memos
fake_btf "$T_TMP/third.btf" ukstap_third_kernel
mv "$T_TMP/third.btf" "$OTHER"
t "another kernel's BTF replaced at the same path: compiled" 0 '~/stap_.*\.bpf\.o$' '' -- p4 "$OTHER"
t "... a third compile, a third module" 0 $'3 compiles, 3 modules\n' '' -- counts
# Rewritten in place (same inode, new mtime and ctime): the running kernel's bytes now, so the
# running kernel's module, already cached (the memo of the old bytes is not used: its name has
# the old times).
ino=$(stat -c %i "$OTHER")
cp "$SAME" "$OTHER"
t "the file rewritten in place with the running kernel's bytes: the running kernel's module" 0 \
  "$O_RUNNING"$'\n' '' -- p4 "$OTHER"
t "... the same inode" 0 "$ino"$'\n' '' -- stat -c %i "$OTHER"
t "... still three compiles" 0 $'3 compiles, 3 modules\n' '' -- counts

# --- a BTF that is not a regular file: one error line, no hang (a FIFO's open waits for a
# writer, /dev/zero never ends), nothing written. timeout only bounds a failure.
mkfifo "$T_TMP/fifo"
before=$(find "$C" | sort | md5sum)
for f in "$T_TMP/fifo" /dev/zero "$T_TMP"; do
  t "UKSTAP_VMLINUX_BTF=$f (not a regular file): one error line" 1 '' \
    "ukstap: the kernel's BTF $f is not a regular file"$'\nPass 4: compilation failed.  [man error::pass4]\n' -- \
    timeout -s KILL 60 env XDG_CACHE_HOME="$C" UKSTAP_VMLINUX_BTF="$f" "$UKSTAP" -p4 -e "$SCRIPT"
done
t "... nothing written to the cache" 0 "$before"$'\n' '' -- sh -c 'find "$0" | sort | md5sum' "$C"
t_done
