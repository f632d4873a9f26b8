// ukstap -i / --interactive: SystemTap's interactive mode. A prompt where the user builds a
// script (add, delete, list, edit, load, save), runs it (run: passes 1-5 in the foreground,
// ^C stops the run and comes back to the prompt) and sets options (set, show); readline
// editing, tab completion (driver/interactive_completion.h) and history kept in
// ~/.ukstap_history. The commands: driver/interactive_commands.h.
//
// With a terminal on stdin: prompts, questions before deleting or replacing the whole script,
// history read and appended (one line per command). Without (commands piped in, for scripts
// and tests): no prompt, no questions (the answer is yes), no history; each command's output
// as on a terminal, errors on stderr, and the runs do not read the piped commands.
#pragma once

#include "driver/run_session.h"
#include "driver/session.h"

namespace ukstap::interactive {

// The prompt until quit, ^D or the end of stdin. A script on the command line (-e or a file)
// is the starting script. Returns ukstap's exit status (0; 1 when the starting script cannot
// be read). Each run goes through RUN (driver/run_session.h: main.cpp's run_session).
int run_prompt(const Options& opts, RunSession run);

}  // namespace ukstap::interactive
