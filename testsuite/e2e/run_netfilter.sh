#!/bin/bash
# The netfilter family (translator/probes/netfilter_family.cpp, loader/attach_netfilter.cpp)
# and tapsets/netfilter.stp. The traffic is one UDP datagram over loopback that the -c command
# (netfilter_udp.py) sends from a port the test chose to another: the addresses, ports,
# protocol (17), length (IP header + 8 + payload) and payload bytes a probe reports are the
# sender's. Dropping is checked by the receiver: it times out while `$verdict = nf_drop` runs
# and receives the same datagram once ukstap has exited, with no netfilter link left
# (bpftool). Bad points are one error each.
set -u
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

SEND="python3 $(dirname "$0")/netfilter_udp.py send"
REFUSED="python3 $(dirname "$0")/netfilter_udp.py refused"
# Ports of our own, away from the ephemeral range's start; other tests' traffic is filtered out.
SP=$((40000 + $$ % 10000)) DP=$((40000 + $$ % 10000 + 1))
PAYLOAD="ukstap-nf-$$"
HEX=$(printf '%s' "$PAYLOAD" | od -An -tx1 | tr -d ' \n')
N=${#PAYLOAD}

# netfilter.ipv4.local_in and netfilter.ip.local_in hook the same point (the kernel takes one
# BPF program per place: the second goes one priority later); $skb->len is length; $hooknum is
# NF_INET_LOCAL_IN (1); the payload is the end of data_hex (20 + 8 header bytes before it).
# IPv6: a 40-byte header; addresses as format_ipaddr prints them. TCP flags: a connect to a
# port where nothing listens is a SYN, answered by RST+ACK (RFC 793). One run sends all three.
V='probe netfilter.ipv4.local_in, netfilter.ip.local_in {
  if (dport != '$DP' || family != 2 || protocol != ipproto_udp) next
  printf("%s %s %s %d>%d proto %d len %d %d hook %d dev %s verdict %d\n", pn(), pf, saddr, sport,
         dport, protocol, length, $skb->len, $hooknum, indev_name, $verdict)
  printf("%s %d\n", substr(data_hex, 56, 2 * '$N'), family)
}
probe netfilter.ipv6.post_routing { if (dport == '$DP') printf("%s %s %s %d>%d %d %d %s\n", pf,
  saddr, daddr, sport, dport, protocol, length, outdev_name) }
probe netfilter.ipv4.local_out { if (protocol == ipproto_tcp && (dport == '$DP' || sport == '$DP'))
  printf("tcp %d>%d syn %d ack %d rst %d fin %d psh %d urg %d\n", sport, dport, syn, ack, rst, fin, psh, urg) }'
ONE=0000:0000:0000:0000:0000:0000:0000:0001
t "netfilter.ipv4.local_in, netfilter.ip.local_in, netfilter.ipv6.post_routing: as sent" 0 \
"netfilter.ipv4.local_in ipv4 127.0.0.1 $SP>$DP proto 17 len $((28 + N)) $((28 + N)) hook 1 dev lo verdict 1
$HEX 2
netfilter.ip.local_in ipv4 127.0.0.1 $SP>$DP proto 17 len $((28 + N)) $((28 + N)) hook 1 dev lo verdict 1
$HEX 2
ipv6 $ONE $ONE $SP>$DP 17 $((48 + N)) lo
tcp $SP>$DP syn 1 ack 0 rst 0 fin 0 psh 0 urg 0
tcp $DP>$SP syn 0 ack 1 rst 1 fin 0 psh 0 urg 0
" '' -- "$UKSTAP" -e "$V" -c "$SEND 4 $SP $DP $PAYLOAD $T_TMP/rx && $SEND 6 $SP $DP $PAYLOAD $T_TMP/rx6 && $REFUSED $SP $DP"
t "... and the receivers got them" 0 "received $N
received $N
" '' -- cat "$T_TMP/rx" "$T_TMP/rx6"

# Dropping: the receiver gets nothing while the probe drops; after exit it gets the datagram.
links_before=$(bpftool link list 2>/dev/null | grep -c netfilter)
DROP='global n
probe netfilter.ipv4.local_in { if (dport == '$DP') { $verdict = nf_drop; n <<< length } }
probe end { printf("dropped %d, %d bytes\n", @count(n), @sum(n)) }'
t "\$verdict = nf_drop: the probe dropped one datagram" 0 "dropped 1, $((28 + N)) bytes
" '' -- "$UKSTAP" -g -e "$DROP" -c "$SEND 4 $SP $DP $PAYLOAD $T_TMP/rx"
t "\$verdict = nf_drop: the receiver got nothing" 0 $'timeout\n' '' -- cat "$T_TMP/rx"
t "after ukstap exits: no netfilter link is left" 0 "$links_before
" '' -- bash -c 'bpftool link list | grep -c netfilter; true'
t "after ukstap exits: the same datagram is received" 0 "received $N
" '' -- $SEND 4 $SP $DP "$PAYLOAD"

# Verdicts a BPF netfilter program cannot return are a run-time error; the packet is accepted.
t "\$verdict = nf_queue: an error" 1 '' '~^ERROR: \$verdict can only be nf_drop \(0\) or nf_accept \(1\)' -- \
  "$UKSTAP" -g -e 'probe netfilter.ipv4.local_in { if (dport == '$DP') $verdict = nf_queue }' \
  -c "$SEND 4 $SP $DP $PAYLOAD $T_TMP/rx"
t "\$verdict = nf_queue: the packet goes through" 0 "received $N
" '' -- cat "$T_TMP/rx"

# Bad points: one error naming the fault; writing $verdict needs -g.
t "unknown hook name" 1 '' "~unknown netfilter hook 'NF_INET_NOPE' for NFPROTO_IPV4" -- \
  "$UKSTAP" -p2 -e 'probe netfilter.hook("NF_INET_NOPE").pf("NFPROTO_IPV4") { }'
t "unknown protocol family" 1 '' "~unknown netfilter protocol family 'NFPROTO_X'" -- \
  "$UKSTAP" -p2 -e 'probe netfilter.pf("NFPROTO_X").hook("NF_INET_LOCAL_IN") { }'
t "a bridge hook: the kernel serves IPv4 and IPv6 only" 1 '' \
  '~NFPROTO_BRIDGE hooks cannot be served: .*accept only NFPROTO_IPV4 and NFPROTO_IPV6' -- \
  "$UKSTAP" -p2 -e 'probe netfilter.bridge.local_in { }'
t "a wildcard leaves ARP and bridge hooks out and says so with -v" 0 '*' \
  '~^skipping netfilter.hook\("NF_BR_FORWARD"\).pf\("NFPROTO_BRIDGE"\) \(matched by netfilter.\*.\*\)' -- \
  "$UKSTAP" -p2 -v -e 'probe netfilter.*.* { }'
t "writing \$verdict needs guru mode" 1 '' '~write to target variable not permitted; need stap -g' -- \
  "$UKSTAP" -p2 -e 'probe netfilter.ipv4.local_in { $verdict = nf_drop }'

t_done
