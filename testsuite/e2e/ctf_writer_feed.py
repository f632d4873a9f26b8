"""The CTF writer alone, fed wire messages by hand (ctf-writer/wire.h), for run_ctf.sh and
run_ctf_drops.sh: ukstap re-executed as ukstap-ctf-writer DIR with its socket on fd 3, as
ukstap itself starts it."""
import os
import socket
import struct
import subprocess


def start_writer(ukstap, trace_dir):
    """(our end of the socket, the writer process)."""
    a, b = socket.socketpair()
    a2 = a.dup(); a.close(); a = a2  # fd 3 is for the writer's end
    os.dup2(b.fileno(), 3)
    w = subprocess.Popen(["ukstap-ctf-writer", trace_dir], executable=ukstap, pass_fds=[3],
                         stdout=subprocess.DEVNULL)
    os.close(3)
    b.close()
    return a, w


def s(t):
    """wire.h's str: u32 length, bytes."""
    return struct.pack("<I", len(t)) + t


def msg(body):
    """A message: u32 body length, the body."""
    return struct.pack("<I", len(body)) + body
