// The netfilter family (translator/probes/netfilter_family.cpp, loader/netfilter_abi.h): the
// numbers a point resolves to are the uapi headers' (<linux/netfilter*.h>), and the ABI the
// loader writes by hand (libbpf 1.1 and the 6.1 uapi headers predate it) is the running
// kernel's, read from its BTF with libbpf.
#include <linux/netfilter.h>
#include <linux/netfilter_arp.h>
#include <linux/netfilter_bridge.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>

#include <bpf/btf.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <sstream>
#include <string>

#include "driver/diagnostics.h"
#include "driver/session.h"
#include "loader/netfilter_abi.h"
#include "probes/family_point.h"
#include "probe_points.h"
#include "test_util.h"

using namespace ukstap;
using test::as;
using test::resolve;

namespace {

probes::NetfilterPoint nf_point(Session& s, const char* hook, const char* pf, const char* prio = nullptr) {
  std::vector<test::C> comps = {{"netfilter"}, {"hook", hook}, {"pf", pf}};
  if (prio) comps.push_back({"priority", prio});
  auto r = resolve(s, comps);
  REQUIRE(r.size() == 1);
  return as<probes::NetfilterPoint>(r[0]);
}

// The value of enumerator `name` of the kernel's enum `type`, from its BTF.
long long kernel_enum(const struct btf* btf, const char* type, const char* name) {
  int id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);
  REQUIRE(id > 0);
  const struct btf_type* t = btf__type_by_id(btf, id);
  const struct btf_enum* e = btf_enum(t);
  for (int i = 0; i < btf_vlen(t); ++i)
    if (std::strcmp(btf__name_by_offset(btf, e[i].name_off), name) == 0) return e[i].val;
  FAIL("no " << name << " in enum " << type);
  return -1;
}

}  // namespace

TEST_CASE("netfilter points: the uapi headers' numbers", "[probes][netfilter]") {
  std::ostringstream err;
  Session s(err);
  auto p = nf_point(s, "NF_INET_LOCAL_IN", "NFPROTO_IPV4");
  CHECK(p.pf == NFPROTO_IPV4);
  CHECK(p.hooknum == NF_INET_LOCAL_IN);
  CHECK(p.priority == 0);  // stapprobes: the default
  CHECK(p.unservable.empty());
  p = nf_point(s, "NF_IP6_FORWARD", "NFPROTO_IPV6", "NF_IP6_PRI_SELINUX_LAST");
  CHECK(p.pf == NFPROTO_IPV6);
  CHECK(p.hooknum == NF_IP6_FORWARD);
  CHECK(p.priority == NF_IP6_PRI_SELINUX_LAST);
  p = nf_point(s, "NF_IP_LOCAL_OUT", "NFPROTO_IPV4", "-77");
  CHECK(p.hooknum == NF_IP_LOCAL_OUT);
  CHECK(p.priority == -77);
  CHECK(nf_point(s, "NF_INET_POST_ROUTING", "NFPROTO_IPV4", "NF_IP_PRI_NAT_SRC").priority ==
        NF_IP_PRI_NAT_SRC);
  // ARP and bridge resolve to their numbers, and say the kernel cannot serve them.
  p = nf_point(s, "NF_ARP_FORWARD", "NFPROTO_ARP");
  CHECK(p.pf == NFPROTO_ARP);
  CHECK(p.hooknum == NF_ARP_FORWARD);
  CHECK(p.unservable.find("NFPROTO_IPV4 and NFPROTO_IPV6") != std::string::npos);
  p = nf_point(s, "NF_BR_BROUTING", "NFPROTO_BRIDGE");
  CHECK(p.pf == NFPROTO_BRIDGE);
  CHECK(p.hooknum == NF_BR_BROUTING);
  CHECK_FALSE(p.unservable.empty());
  // pf(...).hook(...) is the same point.
  auto r = resolve(s, {{"netfilter"}, {"pf", "NFPROTO_IPV6"}, {"hook", "NF_INET_PRE_ROUTING"}});
  REQUIRE(r.size() == 1);
  CHECK(as<probes::NetfilterPoint>(r[0]).hooknum == NF_INET_PRE_ROUTING);
  // Bad names and the places the kernel keeps for conntrack: one error each.
  CHECK_THROWS_WITH(nf_point(s, "NF_INET_NOPE", "NFPROTO_IPV4"),
                    Catch::Contains("unknown netfilter hook 'NF_INET_NOPE'"));
  CHECK_THROWS_WITH(nf_point(s, "NF_ARP_IN", "NFPROTO_IPV4"),  // an ARP hook for IPv4
                    Catch::Contains("unknown netfilter hook 'NF_ARP_IN' for NFPROTO_IPV4"));
  CHECK_THROWS_WITH(nf_point(s, "NF_INET_LOCAL_IN", "NFPROTO_INET"),
                    Catch::Contains("unknown netfilter protocol family 'NFPROTO_INET'"));
  CHECK_THROWS_WITH(nf_point(s, "NF_INET_LOCAL_IN", "NFPROTO_IPV4", "NF_IP_PRI_FIRST"),
                    Catch::Contains("is reserved by the kernel"));
  CHECK_THROWS_WITH(nf_point(s, "NF_INET_LOCAL_IN", "NFPROTO_IPV4", "12x"),
                    Catch::Contains("neither a number nor"));
}

TEST_CASE("netfilter ABI: the running kernel's BTF", "[loader][netfilter]") {
  struct btf* btf = btf__load_vmlinux_btf();
  if (!btf) {
    ukstap::test::skip_outside_ci("no kernel BTF (/sys/kernel/btf/vmlinux)");
    return;
  }
  CHECK(kernel_enum(btf, "bpf_prog_type", "BPF_PROG_TYPE_NETFILTER") ==
        loader::netfilter_abi::kProgTypeNetfilter);
  CHECK(kernel_enum(btf, "bpf_attach_type", "BPF_NETFILTER") ==
        loader::netfilter_abi::kAttachNetfilter);
  // union bpf_attr's link_create.netfilter: the offset of pf, hooknum, priority, flags.
  int attr = btf__find_by_name_kind(btf, "bpf_attr", BTF_KIND_UNION);
  REQUIRE(attr > 0);
  long long link_create_off = -1, nf_off = -1;
  const struct btf_type* u = btf__type_by_id(btf, attr);
  const struct btf_type* lc = nullptr;
  for (int i = 0; i < btf_vlen(u); ++i) {
    const struct btf_member* m = btf_members(u) + i;
    if (std::strcmp(btf__name_by_offset(btf, m->name_off), "link_create") == 0) {
      link_create_off = btf_member_bit_offset(u, i) / 8;
      lc = btf__type_by_id(btf, m->type);
    }
  }
  REQUIRE(lc != nullptr);
  CHECK(link_create_off == 0);
  // link_create's members: the anonymous union holding `netfilter`.
  const struct btf_type* nf = nullptr;
  for (int i = 0; i < btf_vlen(lc) && !nf; ++i) {
    const struct btf_member* m = btf_members(lc) + i;
    const struct btf_type* mt = btf__type_by_id(btf, m->type);
    if (m->name_off || !btf_is_union(mt)) continue;
    for (int j = 0; j < btf_vlen(mt); ++j) {
      const struct btf_member* mm = btf_members(mt) + j;
      if (std::strcmp(btf__name_by_offset(btf, mm->name_off), "netfilter") == 0) {
        nf_off = btf_member_bit_offset(lc, i) / 8 + btf_member_bit_offset(mt, j) / 8;
        nf = btf__type_by_id(btf, mm->type);
      }
    }
  }
  REQUIRE(nf != nullptr);
  CHECK(nf_off == offsetof(loader::netfilter_abi::LinkCreateAttr, pf));
  const char* names[] = {"pf", "hooknum", "priority", "flags"};
  const size_t offs[] = {offsetof(loader::netfilter_abi::LinkCreateAttr, pf),
                         offsetof(loader::netfilter_abi::LinkCreateAttr, hooknum),
                         offsetof(loader::netfilter_abi::LinkCreateAttr, priority),
                         offsetof(loader::netfilter_abi::LinkCreateAttr, nf_flags)};
  REQUIRE(btf_vlen(nf) == 4);
  for (int i = 0; i < 4; ++i) {
    INFO(names[i]);
    CHECK(std::strcmp(btf__name_by_offset(btf, btf_members(nf)[i].name_off), names[i]) == 0);
    CHECK(nf_off + btf_member_bit_offset(nf, i) / 8 == static_cast<long long>(offs[i]));
  }
  // The fields before the union: prog_fd, target_fd, attach_type, flags at 0, 4, 8, 12.
  CHECK(offsetof(loader::netfilter_abi::LinkCreateAttr, attach_type) == 8);
  btf__free(btf);
}
