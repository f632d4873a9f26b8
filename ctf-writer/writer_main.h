// The CTF writer process's body: a libbabeltrace2 graph, source "ukstap" (bt_source.h) reading
// the wire messages from `fd` -> the ctf plugin's sink.ctf.fs writing the trace into `dir`.
// Returns when `fd` reaches EOF (ukstap closed it, exited, or was killed) and every packet and
// stream is closed and the metadata written: the exit status (0 ok, 1 with a line on stderr).
#pragma once

#include <string>

namespace ukstap::ctf {

int writer_main(int fd, const std::string& dir);

}  // namespace ukstap::ctf
