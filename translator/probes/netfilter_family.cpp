// netfilter.hook("HOOK").pf("PF")[.priority("PRIO")] and netfilter.pf("PF").hook("HOOK")
// [.priority("PRIO")] (stapprobes "NETFILTER HOOKS"). SystemTap registers a hook function from
// its kernel module; ukstap links a BPF_PROG_TYPE_NETFILTER program (Linux 6.4+) at the same
// (pf, hook, priority): loader/attach_netfilter.cpp. Names are the kernel's uapi names
// (linux/netfilter.h, netfilter_ipv4.h, netfilter_ipv6.h, netfilter_arp.h, netfilter_bridge.h);
// their numbers are fixed by the uapi. The tapset aliases (netfilter.ipv4.local_in, ...) are in
// tapsets/netfilter.stp.
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>

#include "driver/diagnostics.h"
#include "driver/session.h"
#include "probes/internal.h"

namespace ukstap::probes {

namespace {

struct Named {
  const char* name;
  int64_t value;
};

// NFPROTO_* (linux/netfilter.h).
const Named kFamilies[] = {
    {"NFPROTO_IPV4", 2}, {"NFPROTO_IPV6", 10}, {"NFPROTO_ARP", 3}, {"NFPROTO_BRIDGE", 7}};

// The hooks of each family. NF_IP_* (netfilter_ipv4.h's old names) and NF_IP6_* are the
// NF_INET_* numbers; the kernel's enum nf_inet_hooks.
const Named kInetHooks[] = {
    {"NF_INET_PRE_ROUTING", 0}, {"NF_INET_LOCAL_IN", 1},     {"NF_INET_FORWARD", 2},
    {"NF_INET_LOCAL_OUT", 3},   {"NF_INET_POST_ROUTING", 4}, {"NF_IP_PRE_ROUTING", 0},
    {"NF_IP_LOCAL_IN", 1},      {"NF_IP_FORWARD", 2},        {"NF_IP_LOCAL_OUT", 3},
    {"NF_IP_POST_ROUTING", 4},  {"NF_IP6_PRE_ROUTING", 0},   {"NF_IP6_LOCAL_IN", 1},
    {"NF_IP6_FORWARD", 2},      {"NF_IP6_LOCAL_OUT", 3},     {"NF_IP6_POST_ROUTING", 4},
};
const Named kArpHooks[] = {{"NF_ARP_IN", 0}, {"NF_ARP_OUT", 1}, {"NF_ARP_FORWARD", 2}};
const Named kBridgeHooks[] = {
    {"NF_BR_PRE_ROUTING", 0}, {"NF_BR_LOCAL_IN", 1},     {"NF_BR_FORWARD", 2},
    {"NF_BR_LOCAL_OUT", 3},   {"NF_BR_POST_ROUTING", 4}, {"NF_BR_BROUTING", 5},
};

// Named priorities (netfilter_ipv4.h enum nf_ip_hook_priorities, netfilter_ipv6.h's NF_IP6_*).
const Named kPriorities[] = {
    {"FIRST", INT_MIN},          {"RAW_BEFORE_DEFRAG", -450}, {"CONNTRACK_DEFRAG", -400},
    {"RAW", -300},               {"SELINUX_FIRST", -225},     {"CONNTRACK", -200},
    {"MANGLE", -150},            {"NAT_DST", -100},           {"FILTER", 0},
    {"SECURITY", 50},            {"NAT_SRC", 100},            {"SELINUX_LAST", 225},
    {"CONNTRACK_HELPER", 300},   {"CONNTRACK_CONFIRM", INT_MAX}, {"LAST", INT_MAX},
};

template <size_t N>
const Named* find(const Named (&table)[N], const std::string& name) {
  for (auto& n : table)
    if (name == n.name) return &n;
  return nullptr;
}

template <size_t N>
std::string names(const Named (&table)[N]) {
  std::string out;
  for (auto& n : table) out += (out.empty() ? "" : ", ") + std::string(n.name);
  return out;
}

int32_t parse_priority(const std::string& text, bool inet, const Token* tok) {
  for (const char* prefix : {"NF_IP_PRI_", "NF_IP6_PRI_"}) {
    std::string p = prefix;
    if (text.rfind(p, 0) != 0) continue;
    if (!inet)
      throw SemanticError("named netfilter priority '" + text +
                              "' is for NFPROTO_IPV4/NFPROTO_IPV6 hooks (use a number)",
                          tok);
    for (auto& n : kPriorities)
      if (text.substr(p.size()) == n.name) return static_cast<int32_t>(n.value);
  }
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 0);
  if (text.empty() || *end || errno || v < INT_MIN || v > INT_MAX)
    throw SemanticError("netfilter priority '" + text +
                            "' is neither a number nor an NF_IP_PRI_*/NF_IP6_PRI_* name",
                        tok);
  return static_cast<int32_t>(v);
}

void build_netfilter(Session& s, const Match& m, std::vector<ResolvedPoint>& out) {
  NetfilterPoint nf;
  nf.pf_name = m.str("pf");
  nf.hook_name = m.str("hook");
  const Named* fam = find(kFamilies, nf.pf_name);
  if (!fam)
    throw SemanticError("unknown netfilter protocol family '" + nf.pf_name + "' (one of " +
                            names(kFamilies) + ")",
                        m.tok("pf"));
  nf.pf = static_cast<uint32_t>(fam->value);
  bool inet = nf.pf == 2 || nf.pf == 10;
  const Named* hook = inet            ? find(kInetHooks, nf.hook_name)
                      : nf.pf == 3    ? find(kArpHooks, nf.hook_name)
                                      : find(kBridgeHooks, nf.hook_name);
  if (!hook)
    throw SemanticError("unknown netfilter hook '" + nf.hook_name + "' for " + nf.pf_name +
                            " (one of " +
                            (inet ? names(kInetHooks) : nf.pf == 3 ? names(kArpHooks)
                                                                   : names(kBridgeHooks)) +
                            ")",
                        m.tok("hook"));
  nf.hooknum = static_cast<uint32_t>(hook->value);
  if (m.has("priority")) nf.priority = parse_priority(m.str("priority"), inet, m.tok("priority"));
  // The kernel (net/netfilter/nf_bpf_link.c) refuses the first and last places: they belong to
  // conntrack and its helpers.
  if (nf.priority == INT_MIN || nf.priority == INT_MAX)
    throw SemanticError("netfilter priority " + std::to_string(nf.priority) +
                            " is reserved by the kernel (BPF netfilter hooks take a priority "
                            "strictly between NF_IP_PRI_FIRST and NF_IP_PRI_LAST)",
                        m.tok("priority"));
  // BPF netfilter links accept NFPROTO_IPV4 and NFPROTO_IPV6 only (Linux 6.4 to 6.18: the
  // kernel answers EAFNOSUPPORT for every other family, measured on 6.18 by linking at every
  // pf and hook). SystemTap's kernel module could hook ARP and bridge packets.
  if (!inet)
    nf.unservable = nf.pf_name + " hooks cannot be served: the kernel's BPF netfilter links "
                    "(BPF_PROG_TYPE_NETFILTER) accept only NFPROTO_IPV4 and NFPROTO_IPV6, and "
                    "SystemTap's netfilter hooks for other families need a kernel module";
  ResolvedPoint rp;
  rp.point = make_point(s, *m.pp, concrete_components(m));
  rp.family = nf;
  // stapprobes' context variables; $verdict is written (guru mode) to drop the packet.
  rp.target_vars.push_back({"$hooknum", "long"});
  rp.target_vars.push_back({"$skb", "struct sk_buff *"});
  rp.target_vars.push_back({"$in", "struct net_device *"});
  rp.target_vars.push_back({"$out", "struct net_device *"});
  rp.target_vars.push_back({"$verdict", "long"});
  out.push_back(std::move(rp));
}

}  // namespace

void add_netfilter_patterns(std::vector<Pattern>& out) {
  const PatternComponent nf{"netfilter", ArgKind::None}, hook{"hook", ArgKind::String},
      pf{"pf", ArgKind::String}, prio{"priority", ArgKind::String};
  out.push_back({{nf, hook, pf}, build_netfilter});
  out.push_back({{nf, pf, hook}, build_netfilter});
  out.push_back({{nf, hook, pf, prio}, build_netfilter});
  out.push_back({{nf, pf, hook, prio}, build_netfilter});
}

}  // namespace ukstap::probes
