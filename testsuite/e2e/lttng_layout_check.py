#!/usr/bin/env python3
"""run_lttng_live.sh's check that a `ukstap --ctf=DIR` trace is laid out as LTTng-UST lays out
the parts Trace Compass and babeltrace2 read (ctf-writer/trace_writer.cpp's environment), read
with babeltrace2's Python bindings against a real LTTng-UST trace recorded on this machine.

  lttng_layout_check.py REAL OURS
      REAL: an LTTng-UST trace with lttng_ust_statedump events and the vpid, vtid, ip contexts.
      OURS: a --ctf trace with statedump events. Truths, all from REAL:
      - the environment keys Trace Compass reads: domain (a string), tracer_name (a string),
        tracer_major and tracer_minor (integers: it parses them as such): OURS has the same;
      - lttng_ust_statedump:bin_info, build_id, debug_link: the same payload members in the same
        order, each of the same kind (string, signed or unsigned integer, array of integers) and
        width (integer range); integers with the same display base (a sequence's length member
        aside: u32 here, u64 there);
      - the common context members vpid, vtid, ip, procname of the same kinds and widths.
"""
import sys

import bt2

CLASSES = ("lttng_ust_statedump:bin_info", "lttng_ust_statedump:build_id", "lttng_ust_statedump:debug_link")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def read(path):
    env, classes, common = None, {}, None
    for msg in bt2.TraceCollectionMessageIterator(path):
        if type(msg) is bt2._StreamBeginningMessageConst and env is None:
            env = {k: v for k, v in msg.stream.trace.environment.items()}
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        if ev.name in CLASSES and ev.name not in classes:
            classes[ev.name] = ev.cls.payload_field_class
            common = ev.cls.stream_class.event_common_context_field_class
    return env, classes, common


def kind(fc, base=True):
    """What a reader sees of a field class: its kind, integer width, display base."""
    if isinstance(fc, bt2._StringFieldClassConst):
        return "string"
    if isinstance(fc, bt2._IntegerFieldClassConst):
        signed = isinstance(fc, bt2._SignedIntegerFieldClassConst)
        k = "%s%d" % ("s" if signed else "u", fc.field_value_range)
        return k + ("/base%d" % int(fc.preferred_display_base) if base else "")
    if isinstance(fc, bt2._ArrayFieldClassConst):
        return "array of " + kind(fc.element_field_class, base)
    return type(fc).__name__


def main(real, ours):
    renv, rcls, rcommon = read(real)
    oenv, ocls, ocommon = read(ours)
    for k in ("domain", "tracer_name", "tracer_major", "tracer_minor"):
        if k not in renv:
            fail("the LTTng-UST trace has no %s" % k)
        if k not in oenv:
            fail("no %s in the --ctf trace's environment" % k)
        r, o = renv[k], oenv[k]
        if type(r) is not type(o) or str(r) != str(o):
            fail("%s: %r (%s) in the --ctf trace, %r (%s) in LTTng-UST's" % (k, o, type(o).__name__, r, type(r).__name__))
    for name in CLASSES:
        if name not in rcls:
            fail("no %s in the LTTng-UST trace" % name)
        if name not in ocls:
            fail("no %s in the --ctf trace" % name)
        # A sequence's length member (_build_id_length) is u32 in --ctf traces (sink.ctf.fs's
        # choice), u64 in LTTng-UST's: readers read the array (Trace Compass: build_id as
        # long[]), never its length member, which is left out here.
        r = [(m.name, kind(m.field_class)) for m in rcls[name].values() if not m.name.endswith("_length")]
        o = [(m.name, kind(m.field_class)) for m in ocls[name].values() if not m.name.endswith("_length")]
        if r != o:
            fail("%s: %s in the --ctf trace, %s in LTTng-UST's" % (name, o, r))
    for m in ("vpid", "vtid", "ip", "procname"):
        if m not in rcommon or m not in ocommon:
            fail("context %s missing" % m)
        # (the display base of ip differs: LTTng-UST prints it in decimal, --ctf in hex)
        r, o = kind(rcommon[m].field_class, False), kind(ocommon[m].field_class, False)
        if r != o:
            fail("context %s: %s in the --ctf trace, %s in LTTng-UST's" % (m, o, r))
    print("ok: env %s; %d statedump classes" % (", ".join("%s=%s" % (k, oenv[k]) for k in ("domain", "tracer_name", "tracer_major", "tracer_minor")), len(CLASSES)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
