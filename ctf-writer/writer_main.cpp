// The writer process's graph (writer_main.h).
#include "ctf-writer/writer_main.h"

#include <babeltrace2/babeltrace.h>
#include <signal.h>
#include <sys/prctl.h>

#include <cstdio>
#include <cstdlib>

#include "ctf-writer/bt_source.h"

namespace ukstap::ctf {

int writer_main(int fd, const std::string& dir) {
  // ^C and SIGTERM reach ukstap's whole process group: this process ends on EOF only, after
  // ukstap has stopped sending, so the last events are written.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  // exec of /proc/self/exe names the process "exe" (ps, top): give it a name that says what it is.
  ::prctl(PR_SET_NAME, "ukstap-ctf");
  auto fail = [&](const char* what) {
    std::fprintf(stderr, "ukstap: cannot write the CTF trace '%s': %s\n", dir.c_str(), what);
    return 1;
  };
  // This process runs as root (sudo -E keeps the caller's environment and HOME): it loads the
  // ctf plugin from babeltrace2's system directory only, never from BABELTRACE_PLUGIN_PATH or
  // ~/.local/lib/babeltrace2/plugins, and no Python plugin provider (whose directory
  // LIBBABELTRACE2_PLUGIN_PROVIDER_DIR would name): libbabeltrace2 reads these at load time.
  ::unsetenv("BABELTRACE_PLUGIN_PATH");
  ::unsetenv("LIBBABELTRACE2_PLUGIN_PROVIDER_DIR");
  ::setenv("LIBBABELTRACE2_DISABLE_PYTHON_PLUGINS", "1", 1);
  const bt_plugin* plugin = nullptr;
  if (bt_plugin_find("ctf", /*find_in_std_env_var=*/BT_FALSE, /*find_in_user_dir=*/BT_FALSE,
                     /*find_in_sys_dir=*/BT_TRUE, /*find_in_static=*/BT_FALSE, /*fail_on_load_error=*/BT_TRUE,
                     &plugin) != BT_PLUGIN_FIND_STATUS_OK)
    return fail("babeltrace2's ctf plugin is not installed");
  const bt_component_class_sink* sink_cls = bt_plugin_borrow_sink_component_class_by_name_const(plugin, "fs");
  if (!sink_cls) return fail("babeltrace2's ctf plugin has no sink.ctf.fs");
  bt_component_class_source* src_cls = make_source_class();
  bt_graph* graph = bt_graph_create(0);
  const bt_component_source* src = nullptr;
  const bt_component_sink* sink = nullptr;
  bt_value* params = bt_value_map_create();
  bt_value_map_insert_string_entry(params, "path", dir.c_str());
  int rc = 0;
  if (bt_graph_add_source_component_with_initialize_method_data(graph, src_cls, "ukstap", nullptr, &fd,
                                                                 BT_LOGGING_LEVEL_WARNING, &src) != BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
      bt_graph_add_sink_component(graph, sink_cls, "sink", params, BT_LOGGING_LEVEL_WARNING, &sink) !=
          BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
      bt_graph_connect_ports(graph, bt_component_source_borrow_output_port_by_name_const(src, "out"),
                             bt_component_sink_borrow_input_port_by_name_const(sink, "in"),
                             nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
    rc = fail("cannot make the babeltrace2 graph");
  } else {
    bt_graph_run_status st;
    while ((st = bt_graph_run(graph)) == BT_GRAPH_RUN_STATUS_AGAIN) {
    }
    if (st != BT_GRAPH_RUN_STATUS_OK) rc = fail("the babeltrace2 graph failed");
  }
  bt_value_put_ref(params);
  bt_graph_put_ref(graph);  // finalizes sink.ctf.fs: it writes the metadata
  bt_component_class_source_put_ref(src_cls);
  bt_plugin_put_ref(plugin);
  return rc;
}

}  // namespace ukstap::ctf
