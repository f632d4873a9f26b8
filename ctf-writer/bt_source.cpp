// The source component of the writer process (bt_source.h): wire messages -> trace IR.
#include "ctf-writer/bt_source.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ctf-writer/trace_dir.h"
#include "ctf-writer/wire.h"

namespace ukstap::ctf {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kReadBytes = 1 << 20;

struct EventClass {
  bt_event_class* ec = nullptr;
  std::vector<FieldSpec> fields;
  std::vector<uint64_t> member;  // each field's index in its scope's structure
};

struct Stream {
  bt_stream* stream = nullptr;
  bt_packet* packet = nullptr;  // the open packet, null between packets
  uint64_t last_ts = 0;         // clock snapshots never go back within a stream
  bool had_packet = false;      // a packet was opened (and last_ts is where the last one ended)
  int events = 0;               // in the open packet
  Clock::time_point opened;
};

struct State {
  int fd = -1;
  bt_self_component* comp = nullptr;
  bt_self_message_iterator* it = nullptr;
  bt_trace_class* tc = nullptr;
  bt_clock_class* cc = nullptr;
  bt_stream_class* sc = nullptr;
  bt_trace* trace = nullptr;
  std::vector<FieldSpec> common;
  std::vector<uint64_t> common_member;
  std::vector<EventClass> classes;
  std::vector<std::string> symbols;    // by symbol id (wire.h Symbol)
  std::map<uint32_t, Stream> streams;  // by cpu
  MessageReader in;                    // bytes read, not yet decoded
  std::vector<char> rd;                // read(2)'s buffer
  bool eof = false, ended = false;
  uint64_t raised = 0;                 // events whose timestamp was raised to their stream's last
  std::deque<const bt_message*> out;   // made, not yet handed to the graph

  ~State() {
    for (auto* m : out) bt_message_put_ref(m);
    for (auto& [cpu, s] : streams) {
      bt_packet_put_ref(s.packet);
      bt_stream_put_ref(s.stream);
    }
    for (auto& c : classes) bt_event_class_put_ref(c.ec);
    bt_trace_put_ref(trace);
    bt_stream_class_put_ref(sc);
    bt_clock_class_put_ref(cc);
    bt_trace_class_put_ref(tc);
  }
};

bt_field_class* integer_class(bt_trace_class* tc, bool is_signed, uint8_t bits, uint8_t base) {
  bt_field_class* fc = is_signed ? bt_field_class_integer_signed_create(tc) : bt_field_class_integer_unsigned_create(tc);
  bt_field_class_integer_set_field_value_range(fc, bits >= 1 && bits <= 64 ? bits : 64);
  if (base == 16)
    bt_field_class_integer_set_preferred_display_base(fc, BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_HEXADECIMAL);
  else if (base == 8)
    bt_field_class_integer_set_preferred_display_base(fc, BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_OCTAL);
  else if (base == 2)
    bt_field_class_integer_set_preferred_display_base(fc, BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_BINARY);
  return fc;
}

// Appends `f` to `st` (a sequence gets its "_NAME_length" member first, as LTTng names them);
// returns the index of the member holding the value.
uint64_t append_member(bt_trace_class* tc, bt_field_class* st, const FieldSpec& f) {
  bt_field_class* fc = nullptr;
  switch (f.type) {
    case Type::Sint: fc = integer_class(tc, true, f.bits, f.base); break;
    case Type::Uint: fc = integer_class(tc, false, f.bits, f.base); break;
    case Type::String: fc = bt_field_class_string_create(tc); break;
    case Type::UintSeq:
    case Type::StringSeq:
    case Type::SymbolSeq: {
      bt_field_class* len = integer_class(tc, false, 32, 10);
      bt_field_class_structure_append_member(st, ("_" + f.name + "_length").c_str(), len);
      bt_field_class* elem =
          f.type == Type::UintSeq ? integer_class(tc, false, f.bits, f.base) : bt_field_class_string_create(tc);
      fc = bt_field_class_array_dynamic_create(tc, elem, len);
      bt_field_class_put_ref(elem);
      bt_field_class_put_ref(len);
      break;
    }
  }
  bt_field_class_structure_append_member(st, f.name.c_str(), fc);
  bt_field_class_put_ref(fc);
  return bt_field_class_structure_get_member_count(st) - 1;
}

void set_string(bt_field* fld, std::string_view v) {
  bt_field_string_clear(fld);
  bt_field_string_append_with_length(fld, v.data(), v.size());
}

// Reads one value of `f` from `d` into member `idx` of the structure field `st`.
void read_value(const State& s, Decoder& d, const FieldSpec& f, bt_field* st, uint64_t idx) {
  bt_field* fld = st ? bt_field_structure_borrow_member_field_by_index(st, idx) : nullptr;
  switch (f.type) {
    case Type::Sint: {
      int64_t v = static_cast<int64_t>(d.u64());
      if (fld) bt_field_integer_signed_set_value(fld, v);
      break;
    }
    case Type::Uint: {
      uint64_t v = d.u64();
      if (fld) bt_field_integer_unsigned_set_value(fld, v);
      break;
    }
    case Type::String: {
      std::string_view v = d.sv();
      if (fld) set_string(fld, v);
      break;
    }
    case Type::UintSeq:
    case Type::StringSeq:
    case Type::SymbolSeq: {
      uint32_t n = d.u32();
      if (!d.ok) return;
      if (fld) {
        bt_field_integer_unsigned_set_value(bt_field_structure_borrow_member_field_by_index(st, idx - 1), n);
        bt_field_array_dynamic_set_length(fld, n);
      }
      for (uint32_t i = 0; i < n && d.ok; ++i) {
        bt_field* e = fld ? bt_field_array_borrow_element_field_by_index(fld, i) : nullptr;
        if (f.type == Type::UintSeq) {
          uint64_t v = d.u64();
          if (e) bt_field_integer_unsigned_set_value(e, v);
        } else if (f.type == Type::StringSeq) {
          std::string_view v = d.sv();
          if (e) set_string(e, v);
        } else {
          uint32_t id = d.u32();
          if (e) set_string(e, id < s.symbols.size() ? std::string_view(s.symbols[id]) : std::string_view());
        }
      }
      break;
    }
  }
}

void on_init(State& s, Decoder& d) {
  if (s.tc) return;  // one Init per trace
  uint64_t offset_ns = d.u64();
  std::string clock_name = d.str();
  s.tc = bt_trace_class_create(s.comp);
  s.cc = bt_clock_class_create(s.comp);
  bt_clock_class_set_name(s.cc, clock_name.c_str());
  bt_clock_class_set_frequency(s.cc, 1000000000ull);
  bt_clock_class_set_offset(s.cc, static_cast<int64_t>(offset_ns / 1000000000ull), offset_ns % 1000000000ull);
  bt_clock_class_set_origin_is_unix_epoch(s.cc, BT_TRUE);
  s.sc = bt_stream_class_create(s.tc);
  bt_stream_class_set_name(s.sc, "channel0");
  bt_stream_class_set_default_clock_class(s.sc, s.cc);
  bt_stream_class_set_supports_packets(s.sc, BT_TRUE, BT_TRUE, BT_TRUE);
  // Ring-buffer losses (wire.h Discarded): sink.ctf.fs counts them in the packet context's
  // events_discarded, which readers turn back into "discarded events" between two packets.
  bt_stream_class_set_supports_discarded_events(s.sc, BT_TRUE, BT_TRUE);
  bt_field_class* pc = bt_field_class_structure_create(s.tc);
  bt_field_class* cpu = integer_class(s.tc, false, 32, 10);
  bt_field_class_structure_append_member(pc, "cpu_id", cpu);
  bt_field_class_put_ref(cpu);
  bt_stream_class_set_packet_context_field_class(s.sc, pc);
  bt_field_class_put_ref(pc);
  s.trace = bt_trace_create(s.tc);
  bt_trace_set_name(s.trace, kTraceSubdir);  // sink.ctf.fs's directory in DIR (trace_dir.h)
  uint32_t nenv = d.u32();
  for (uint32_t i = 0; i < nenv && d.ok; ++i) {
    std::string k = d.str(), v = d.str();
    // A value of digits is an integer entry (tracer_major = 2;, as LTTng writes it: Trace
    // Compass parses the version as an integer).
    bool digits = !v.empty() && v.size() < 19 && v.find_first_not_of("0123456789") == std::string::npos;
    if (d.ok && digits) bt_trace_set_environment_entry_integer(s.trace, k.c_str(), std::stoll(v));
    else if (d.ok) bt_trace_set_environment_entry_string(s.trace, k.c_str(), v.c_str());
  }
  uint32_t ncommon = d.u32();
  bt_field_class* cc = bt_field_class_structure_create(s.tc);
  for (uint32_t i = 0; i < ncommon && d.ok; ++i) {
    FieldSpec f = d.spec();
    if (!d.ok) break;
    s.common_member.push_back(append_member(s.tc, cc, f));
    s.common.push_back(f);
  }
  if (!s.common.empty()) bt_stream_class_set_event_common_context_field_class(s.sc, cc);
  bt_field_class_put_ref(cc);
}

void on_class(State& s, Decoder& d) {
  uint32_t id = d.u32();
  std::string name = d.str();
  uint32_t n = d.u32();
  std::vector<FieldSpec> fields;
  for (uint32_t i = 0; i < n && d.ok; ++i) fields.push_back(d.spec());
  if (!d.ok || !s.sc || id != s.classes.size()) return;  // ids are dense, in order
  EventClass c;
  c.ec = bt_event_class_create(s.sc);
  bt_event_class_set_name(c.ec, name.c_str());
  bt_field_class* payload = bt_field_class_structure_create(s.tc);
  bt_field_class* context = bt_field_class_structure_create(s.tc);
  bool has_context = false;
  for (const FieldSpec& f : fields) {
    has_context |= f.scope == Scope::Context;
    c.member.push_back(append_member(s.tc, f.scope == Scope::Context ? context : payload, f));
  }
  bt_event_class_set_payload_field_class(c.ec, payload);
  if (has_context) bt_event_class_set_specific_context_field_class(c.ec, context);
  bt_field_class_put_ref(payload);
  bt_field_class_put_ref(context);
  c.fields = std::move(fields);
  s.classes.push_back(std::move(c));
}

void end_packet(State& s, Stream& st) {
  if (!st.packet) return;
  s.out.push_back(bt_message_packet_end_create_with_default_clock_snapshot(s.it, st.packet, st.last_ts));
  bt_packet_put_ref(st.packet);
  st.packet = nullptr;
}

Stream& open_stream(State& s, uint32_t cpu) {
  Stream& st = s.streams[cpu];
  if (!st.stream) {
    st.stream = bt_stream_create(s.sc, s.trace);
    std::string name = "channel0_" + std::to_string(cpu);  // sink.ctf.fs names the file after it
    bt_stream_set_name(st.stream, name.c_str());
    s.out.push_back(bt_message_stream_beginning_create(s.it, st.stream));
  }
  return st;
}

void begin_packet(State& s, Stream& st, uint32_t cpu, uint64_t ts) {
  st.packet = bt_packet_create(st.stream);
  bt_field* ctx = bt_packet_borrow_context_field(st.packet);
  bt_field_integer_unsigned_set_value(bt_field_structure_borrow_member_field_by_index(ctx, 0), cpu);
  s.out.push_back(bt_message_packet_beginning_create_with_default_clock_snapshot(s.it, st.packet, ts));
  st.events = 0;
  st.opened = Clock::now();
  st.had_packet = true;
}

Stream& stream_of(State& s, uint32_t cpu, uint64_t ts) {
  Stream& st = open_stream(s, cpu);
  if (st.packet && (st.events >= kPacketEvents || Clock::now() - st.opened > std::chrono::seconds(kPacketSeconds)))
    end_packet(s, st);
  // Native records (end and timer probes run in ukstap) carry sched_getcpu() and their own run
  // time, and share the CPU's stream with BPF events stamped earlier but sent later: a stream's
  // clock must not go back, so such an event gets the stream's last time (counted, reported).
  if (ts < st.last_ts) {
    ts = st.last_ts;
    ++s.raised;
  }
  if (!st.packet) begin_packet(s, st, cpu, ts);
  st.last_ts = ts;
  return st;
}

void on_symbol(State& s, Decoder& d) {
  uint32_t id = d.u32();
  std::string_view text = d.sv();
  if (d.ok && id == s.symbols.size()) s.symbols.emplace_back(text);  // ids are dense, in order
}

// CTF 1.8 says how many events a stream lost in its packets' contexts (events_discarded, a
// running count): a reader reports the difference between two packets as lost between the
// first one's end and the second one's end, and sink.ctf.fs accepts a discarded-events message
// only with exactly that range. So the open packet is closed, and an empty packet from its end
// to `ts` carries the count.
void on_discarded(State& s, Decoder& d) {
  uint32_t cpu = d.u32();
  uint64_t ts = d.u64(), count = d.u64();
  if (!d.ok || !s.sc || !count) return;
  Stream& st = open_stream(s, cpu);
  end_packet(s, st);
  if (!st.had_packet) {
    // Readers take a stream's first packet's count as a start, not as a loss ("may have
    // discarded", no N): an empty packet with none comes first.
    begin_packet(s, st, cpu, std::max(ts, st.last_ts));
    st.last_ts = std::max(ts, st.last_ts);
    end_packet(s, st);
  }
  const uint64_t begin = st.last_ts;
  const uint64_t end = std::max(ts, begin);
  bt_message* m = bt_message_discarded_events_create_with_default_clock_snapshots(s.it, st.stream, begin, end);
  bt_message_discarded_events_set_count(m, count);
  s.out.push_back(m);
  begin_packet(s, st, cpu, begin);
  st.last_ts = end;
  end_packet(s, st);
}

void on_event(State& s, Decoder& d) {
  uint32_t id = d.u32();
  uint64_t ts = d.u64();
  uint32_t cpu = d.u32();
  if (!d.ok || !s.sc || id >= s.classes.size()) return;
  const EventClass& c = s.classes[id];
  Stream& st = stream_of(s, cpu, ts);
  bt_message* m = bt_message_event_create_with_packet_and_default_clock_snapshot(s.it, c.ec, st.packet, st.last_ts);
  bt_event* ev = bt_message_event_borrow_event(m);
  bt_field* common = s.common.empty() ? nullptr : bt_event_borrow_common_context_field(ev);
  for (size_t i = 0; i < s.common.size(); ++i) read_value(s, d, s.common[i], common, s.common_member[i]);
  bt_field* payload = bt_event_borrow_payload_field(ev);
  bt_field* context = bt_event_borrow_specific_context_field(ev);
  for (size_t i = 0; i < c.fields.size(); ++i)
    read_value(s, d, c.fields[i], c.fields[i].scope == Scope::Context ? context : payload, c.member[i]);
  // A truncated message still makes its event (its missing fields zero/empty): the streams'
  // messages are already queued around it.
  s.out.push_back(m);
  st.events++;
}

// Decodes the complete messages in the buffer (at most `max` events' worth).
void decode_some(State& s, size_t max) {
  size_t done = 0;
  Decoder d{nullptr, 0};
  while (done < max && s.in.next(d)) {
    switch (static_cast<Kind>(d.u8())) {
      case Kind::Init: on_init(s, d); break;
      case Kind::Class: on_class(s, d); break;
      case Kind::Event: on_event(s, d); break;
      case Kind::Symbol: on_symbol(s, d); break;
      case Kind::Discarded: on_discarded(s, d); break;
    }
    ++done;
  }
  s.in.compact();
}

void end_all(State& s, bool streams_too) {
  for (auto& [cpu, st] : s.streams) {
    end_packet(s, st);
    if (streams_too && st.stream) s.out.push_back(bt_message_stream_end_create(s.it, st.stream));
  }
}

bt_message_iterator_class_next_method_status next(bt_self_message_iterator* it, bt_message_array_const msgs,
                                                  uint64_t capacity, uint64_t* count) {
  State& s = *static_cast<State*>(bt_self_message_iterator_get_data(it));
  if (s.out.empty()) {
    if (s.ended) return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_END;
    decode_some(s, 1024);
    if (s.out.empty() && !s.eof) {
      struct pollfd p = {s.fd, POLLIN, 0};
      int r = ::poll(&p, 1, kIdleMs);
      if (r == 0) {
        end_all(s, false);  // idle: what was written so far is in closed packets
      } else {
        // Reads up to 1 MiB at once: the sender has that much in flight (trace_writer.cpp), and
        // each smaller read was a wake-up of the writer and of ukstap.
        if (s.rd.empty()) s.rd.resize(kReadBytes);
        ssize_t n = ::read(s.fd, s.rd.data(), s.rd.size());
        if (n > 0) s.in.append(s.rd.data(), static_cast<size_t>(n));
        else if (n == 0 || (errno != EINTR && errno != EAGAIN)) s.eof = true;
        decode_some(s, 1024);
      }
    }
    if (s.eof && s.out.empty()) {
      decode_some(s, SIZE_MAX);
      end_all(s, true);
      s.ended = true;
      if (s.raised)
        std::fprintf(stderr, "ukstap: CTF trace: %llu events' timestamps were raised to keep their stream ordered\n",
                     static_cast<unsigned long long>(s.raised));
    }
  }
  uint64_t k = 0;
  while (k < capacity && !s.out.empty()) {
    msgs[k++] = s.out.front();
    s.out.pop_front();
  }
  *count = k;
  if (k) return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_OK;
  return s.ended ? BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_END : BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_AGAIN;
}

bt_message_iterator_class_initialize_method_status it_init(bt_self_message_iterator* it,
                                                           bt_self_message_iterator_configuration*,
                                                           bt_self_component_port_output*) {
  bt_self_component* comp = bt_self_message_iterator_borrow_component(it);
  State* s = static_cast<State*>(bt_self_component_get_data(comp));
  s->it = it;
  bt_self_message_iterator_set_data(it, s);
  return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

bt_component_class_initialize_method_status src_init(bt_self_component_source* self,
                                                     bt_self_component_source_configuration*,
                                                     const bt_value*, void* init_data) {
  auto* s = new State;
  s->fd = *static_cast<const int*>(init_data);
  s->comp = bt_self_component_source_as_self_component(self);
  bt_self_component_set_data(s->comp, s);
  bt_self_component_source_add_output_port(self, "out", nullptr, nullptr);
  return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

void src_finalize(bt_self_component_source* self) {
  delete static_cast<State*>(bt_self_component_get_data(bt_self_component_source_as_self_component(self)));
}

}  // namespace

bt_component_class_source* make_source_class() {
  bt_message_iterator_class* ic = bt_message_iterator_class_create(next);
  bt_message_iterator_class_set_initialize_method(ic, it_init);
  bt_component_class_source* cls = bt_component_class_source_create("ukstap", ic);
  bt_message_iterator_class_put_ref(ic);
  bt_component_class_source_set_initialize_method(cls, src_init);
  bt_component_class_source_set_finalize_method(cls, src_finalize);
  return cls;
}

}  // namespace ukstap::ctf
