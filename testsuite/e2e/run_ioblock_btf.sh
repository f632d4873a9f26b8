#!/bin/bash
# ioblock.request in a probe that reads the tracepoint's argument $bio (a tp_btf probe, which has
# no event record): the alias then takes devname/sector/size/rwbs from the bio
# (tapsets/ioblock.stp, passes/tracepoint_context.cpp). Truth: the kernel's own
# block:block_bio_queue records of the same writes, from a private tracefs instance; and the
# device name from df. A probe reading a record field ($dev) and $bio together stays an error.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

dir=$(mktemp -d /var/tmp/ukstap-ioblock.XXXXXX)
tfs=/sys/kernel/tracing
[ -d "$tfs/instances" ] || tfs=/sys/kernel/debug/tracing
inst=$tfs/instances/ukstap-ioblock-$$
mkdir "$inst"
cleanup() {
  echo 0 > "$inst/events/block/enable"
  rmdir "$inst"
  rm -rf "$dir"
}
trap 'cleanup; rm -rf "$T_TMP"' EXIT
dev=$(basename "$(df --output=source "$dir" | tail -n 1)")

check_ioblock_btf() {
  echo 1 > "$inst/events/block/block_bio_queue/enable"
  "$UKSTAP" -e 'probe ioblock.request {
  if (pid() == target() && $bio) printf("%s %s %d %d\n", devname, rwbs, sector, size / 512)
}' -c "dd if=/dev/zero of=$dir/f bs=64k count=8 oflag=direct" > "$T_TMP/io" 2>/dev/null || return 1
  echo 0 > "$inst/events/block/block_bio_queue/enable"
  # tracefs: "dd-PID [CPU] ... block_bio_queue: MAJ,MIN RWBS SECTOR + NR [COMM]". Any COMM: a
  # read-ahead of dd's own pages during its exec is the target's (pid() == target()) while its
  # comm is still the -c child's old name.
  sed -nE 's/.*block_bio_queue: [0-9]+,[0-9]+ ([A-Z]+) ([0-9]+) \+ ([0-9]+) \[[^]]*\]$/\1 \2 \3/p' \
    "$inst/trace" > "$T_TMP/want"
  [ -s "$T_TMP/io" ] || { echo "no events"; return 1; }
  while read -r name rwbs sector nr; do
    [ "$name" = "$dev" ] || { echo "devname $name, not $dev"; return 1; }
    grep -qx "$rwbs $sector $nr" "$T_TMP/want" || { echo "not in tracefs: $rwbs $sector $nr"; return 1; }
  done < "$T_TMP/io"
  echo ok
}
t ioblock_request_from_bio 0 $'ok\n' '' -- check_ioblock_btf

# ioblock.end with $bio: on a blk-mq device the completions are block_rq_complete's, whose $bio
# is the request's first bio. The bios dd queues are remembered; the completions of those are
# printed and must be block_rq_complete/block_bio_complete records of tracefs (rwbs, sector,
# sectors, error).
check_ioblock_end_btf() {
  echo > "$inst/trace"
  echo 1 > "$inst/events/block/block_rq_complete/enable"
  echo 1 > "$inst/events/block/block_bio_complete/enable"
  "$UKSTAP" -e 'global mine
probe ioblock.request { if (pid() == target()) mine[$bio] = 1 }
probe ioblock.end {
  if ($bio in mine) printf("%s %s %d %d %d\n", devname, rwbs, sector, size / 512, error)
}' -c "dd if=/dev/zero of=$dir/g bs=64k count=8 oflag=direct" > "$T_TMP/io" 2>/dev/null || return 1
  echo 0 > "$inst/events/block/enable"
  # "block_rq_complete: MAJ,MIN RWBS (CMD) SECTOR + NR IOPRIO [ERROR]" (bio_complete: no (CMD)
  # nor IOPRIO)
  sed -nE 's/.*block_(rq|bio)_complete: [0-9]+,[0-9]+ ([A-Z]+) (\([^)]*\) )?([0-9]+) \+ ([0-9]+)( [^ ]+)? \[(-?[0-9]+)\]$/\2 \4 \5 \7/p' \
    "$inst/trace" > "$T_TMP/want"
  [ -s "$T_TMP/io" ] || { echo "no events"; return 1; }
  while read -r name rwbs sector nr err; do
    [ "$name" = "$dev" ] || { echo "devname $name, not $dev"; return 1; }
    grep -qx "$rwbs $sector $nr $err" "$T_TMP/want" ||
      { echo "not in tracefs: $rwbs $sector $nr $err"; return 1; }
  done < "$T_TMP/io"
  echo ok
}
t ioblock_end_from_bio 0 $'ok\n' '' -- check_ioblock_end_btf

t ioblock_record_and_bio 1 '' "~tracepoint field '\\\$dev' cannot be read with BTF argument '\\\$bio'" -- \
  "$UKSTAP" -p2 -e 'probe ioblock.request { printf("%d %d\n", $dev, $bio) }'
t_done
