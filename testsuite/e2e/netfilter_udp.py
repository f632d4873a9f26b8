#!/usr/bin/env python3
"""One UDP datagram over loopback, for run_netfilter.sh: the truths its checks compare with.

  netfilter_udp.py send FAMILY SPORT DPORT PAYLOAD [OUT]
      sends PAYLOAD from [::1]/127.0.0.1:SPORT to DPORT and, with a receiver bound to DPORT,
      writes "received N" (the bytes it got) or "timeout" when nothing came within 1 s to OUT
      (a file: ukstap's output does not interleave with it), or to stdout.
  netfilter_udp.py refused SPORT DPORT
      connects over TCP from 127.0.0.1:SPORT to DPORT, where nothing listens: one SYN, and the
      kernel's RST+ACK back (RFC 793 "Reset Generation"); prints nothing.
FAMILY is 4 or 6. The ports and payload are the test's choice, so the addresses, ports and
lengths a probe reports are known before the run.
"""
import socket
import sys


def refused(sport, dport):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(sport)))
    try:
        s.connect(("127.0.0.1", int(dport)))
    except ConnectionRefusedError:
        return
    sys.exit("connected to a port where nothing should listen")


def main():
    if sys.argv[1] == "refused":
        return refused(sys.argv[2], sys.argv[3])
    fam, sport, dport, payload = sys.argv[2:6]
    out = open(sys.argv[6], "w") if len(sys.argv) > 6 else sys.stdout
    af, host = (socket.AF_INET, "127.0.0.1") if fam == "4" else (socket.AF_INET6, "::1")
    rx = socket.socket(af, socket.SOCK_DGRAM)
    rx.bind((host, int(dport)))
    rx.settimeout(1.0)
    tx = socket.socket(af, socket.SOCK_DGRAM)
    tx.bind((host, int(sport)))
    tx.sendto(payload.encode(), (host, int(dport)))
    try:
        data = rx.recv(65536)
        print("received %d" % len(data), file=out, flush=True)
    except socket.timeout:
        print("timeout", file=out, flush=True)


if __name__ == "__main__":
    main()
