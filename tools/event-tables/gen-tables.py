#!/usr/bin/env python3
"""Generates event-tables/*.toml from two sources, both taken from Debian's packages:

  * the Linux kernel's perf event lists and metrics (linux-source-7.3 from trixie-backports:
    tools/perf/pmu-events/arch/x86/{mapfile.csv,<model>/*.json}, arch/common/common/metrics.json,
    and the generic-event maps of arch/x86/events/{intel,amd}/core.c), for every model they cover;
  * libpfm4 (libpfm4-dev, bookworm), dumped through pfm-dump.c, for the models the kernel has no
    list for (K8, 10h, 11h, 12h, 14h, 15h, 16h, Core 2, NetBurst), and for comparison where both
    cover a model.

Run tools/event-tables/regenerate.sh (it fetches both sources first), or directly:
    ARUM_LINUX_SRC=/path/to/linux tools/event-tables/gen-tables.py
It rewrites event-tables/*.toml and prints, for every model both sources cover, every difference
between them (also written to tools/event-tables/comparison.txt).

What is copied from the sources: event names, encodings (event select, unit mask, counter mask,
invert, edge, any-thread, offcore/ldlat/frontend MSR values), counter restrictions, metric names,
expressions, groups, units and thresholds. Descriptions are ARUM's own, made from the names.
"""

import collections
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "..", "event-tables"))
LINUX = os.environ.get("ARUM_LINUX_SRC",
                       os.path.expanduser("~/.cache/arum-kmod/src-7.3/linux"))
KVER = "7.3"
ARCH = os.path.join(LINUX, "tools/perf/pmu-events/arch/x86")
COMMON = os.path.join(LINUX, "tools/perf/pmu-events/arch/common/common")

# ---------------------------------------------------------------------------------------------
# Descriptions: event and unit-mask names turned into words, abbreviations spelled out.
WORDS = {
    "L1D": "L1 data cache", "L1I": "L1 instruction cache", "DTLB": "data TLB",
    "ITLB": "instruction TLB", "STLB": "second-level TLB", "BR": "branch", "BRANCH": "branch",
    "INST": "instructions", "INSTS": "instructions", "UOPS": "micro-ops", "UOP": "micro-op",
    "OPS": "ops", "CLK": "clock", "REF": "reference", "REFS": "references", "REPL": "line fills",
    "MISP": "mispredicted", "MISPRED": "mispredicted", "RETIRED": "retired", "LD": "load",
    "ST": "store", "RD": "read", "WR": "write", "RFO": "read-for-ownership", "PF": "prefetch",
    "HWPF": "hardware prefetch", "SWPF": "software prefetch", "LLC": "last-level cache",
    "L2": "L2", "L3": "L3", "FP": "floating-point", "INT": "integer", "MEM": "memory",
    "LAT": "latency", "LCL": "local", "RMT": "remote", "DRAM": "DRAM", "IO": "I/O",
    "DSB": "decoded-icache", "MITE": "legacy decode", "MS": "microcode sequencer",
    "IDQ": "instruction decode queue", "RS": "reservation station", "ROB": "reorder buffer",
    "SB": "store buffer", "LSD": "loop stream detector", "MAB": "miss address buffer",
    "IC": "instruction cache", "DC": "data cache", "OC": "op cache", "BTB": "branch target buffer",
    "TLB": "TLB", "CPU": "CPU", "ANY": "any", "ALL": "all", "NUM": "number of",
    "CYCLES": "cycles", "STALLS": "stall cycles", "XSNP": "cross-core snoop", "HITM": "hit-modified",
    "FWD": "forward", "SMC": "self-modifying code", "HLE": "lock elision", "RTM": "transactional memory",
    "TX": "transactional", "NBOGUS": "non-bogus", "BOGUS": "bogus", "NTAG": "untagged",
    "TC": "trace cache", "BPU": "branch prediction unit", "BSQ": "bus sequence queue",
    "FSB": "front-side bus", "IOQ": "in-order queue", "WC": "write-combining", "MMX": "MMX",
    "SSE": "SSE", "AVX": "AVX", "SP": "single-precision", "DP": "double-precision",
    "P": "(programmable counter)", "GE": "at least", "LE": "at most", "NT": "non-temporal",
    "NTA": "non-temporal", "AMX": "AMX", "PMM": "persistent memory", "SNC": "sub-NUMA cluster",
    "OCR": "offcore response", "CCX": "core complex", "FLOPS": "FLOPs", "MAC": "multiply-accumulate",
    "DIV": "divide", "MUL": "multiply", "SQRT": "square root", "CMP": "compare", "CVT": "convert",
    "FPU": "FPU operations", "NBOGUSNTAG": "non-bogus untagged", "NBOGUSTAG": "non-bogus tagged",
    "BOGUSNTAG": "bogus untagged", "BOGUSTAG": "bogus tagged", "TCMISS": "trace cache misses",
    "DTMISS": "data TLB misses", "ITMISS": "instruction TLB misses", "UC": "uncacheable",
    "WB": "write-back", "WT": "write-through", "WP": "write-protect", "LS": "load-store",
    "EX": "execution", "RET": "retired", "BRN": "branches", "INSTR": "instructions",
    "CYC": "cycles", "DE": "decoder", "BP": "branch predictor", "DIS": "dispatch",
    "TKN": "taken", "NTKN": "not taken", "FUSED": "fused", "HWPREF": "hardware prefetch",
    "SW": "software", "HW": "hardware", "LOC": "local", "REM": "remote", "NONTEMP": "non-temporal",
    "ALLOC": "allocations", "MISSES": "misses", "MISS": "miss", "HIT": "hit", "HITS": "hits",
    "ACCESSES": "accesses", "ANY_P": "any (programmable counter)",
}


def words(name):
    out = []
    for tok in re.split(r"[_.:]", name):
        if not tok:
            continue
        out.append(WORDS.get(tok.upper(), tok.lower()))
    return " ".join(out)


def sentence(s):
    return s[:1].upper() + s[1:] if s else s


def toml_str(s):
    return json.dumps(s)


def fmt_ranges(ranges):
    return "[" + ", ".join(f"[0x{a:02X}, 0x{b:02X}]" for a, b in ranges) + "]"


def merge_ranges(rs):
    rs = sorted(rs)
    out = []
    for a, b in rs:
        if out and a <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def to_ranges(values):
    return merge_ranges([(v, v) for v in values])


HEADER_FIELDS = """\
# Fields: `event` select and `umask`/`cmask`/`inv`/`edge`/`any`; `config1` the offcore-response,
# load-latency or frontend MSR value (`msr` names that MSR); `counters` lists the counters that may
# hold the event (general 0.., fixed 32+i; absent: any general counter); `models` limits an event
# or mask to some models; a mask with `all = true` is every other mask the model has; `unit` is the
# core type of a hybrid part (its PMU in /sys/bus/event_source/devices). NetBurst events give the
# ESCR event select, the two ESCRs (and their MSRs) they may use with the counters each ESCR feeds
# (counter n is paired with CCCR n), the CCCR's ESCR select, the kernel's P4 event index, mask
# `bit`s, execution-tagging `tag` values and replay-tagging kinds.
# `src` says where a value came from: k = the kernel's list, p = libpfm4; "k,p" both name it with the
# same encoding; "k!p" both name it, the encodings differ and the kernel's is used (the difference
# is in tools/event-tables/comparison.txt); "k~p" (or "p~k") only the first names it, the second
# has the same encoding under another name; "kc" the kernel's C source. Without `src`, a value comes
# from the table's first source."""


# ---------------------------------------------------------------------------------------------
# libpfm4
def dump(pmu, tool):
    env = dict(os.environ, LIBPFM_FORCE_PMU=pmu)
    out = subprocess.run([tool, pmu], env=env, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def fields(style, raw):
    """Splits a control-register value into the table's fields."""
    f = {"event": raw & 0xFF, "umask": (raw >> 8) & 0xFF, "edge": (raw >> 18) & 1,
         "inv": (raw >> 23) & 1, "cmask": (raw >> 24) & 0xFF, "any": 0}
    if style == "amd":
        f["event"] |= ((raw >> 32) & 0xF) << 8
    else:
        f["any"] = (raw >> 21) & 1
    return f


def pfm_flat(style, rows):
    """libpfm4 rows as {NAME:MASK or NAME: encoding} (each unit mask on its own)."""
    out = {}
    for r in rows:
        if "codes" not in r:
            continue
        name = r["event"] + (":" + r["umask"] if "umask" in r else "")
        f = fields(style, r["codes"][0])
        f["config1"] = r.get("perf_config1", 0)
        out[name] = f
    return out


# ---------------------------------------------------------------------------------------------
# Kernel facts taken from the C source: generic-event maps (PERF_TYPE_HARDWARE config → raw).
def kernel_generic_maps():
    maps = {}
    for path in ("arch/x86/events/intel/core.c", "arch/x86/events/amd/core.c"):
        text = open(os.path.join(LINUX, path)).read()
        for m in re.finditer(r"static\s+(?:const\s+)?u64\s+(\w+)\[PERF_COUNT_HW_MAX\][^=]*=\s*\{(.*?)\};",
                             text, re.S):
            entries = dict((k, int(v, 16)) for k, v in re.findall(
                r"\[PERF_COUNT_HW_(\w+)\]\s*=\s*(0x[0-9a-fA-F]+)", m.group(2)))
            maps[m.group(1)] = entries
    topdown = {}
    text = open(os.path.join(LINUX, "arch/x86/events/intel/core.c")).read()
    for name, umask in re.findall(r'EVENT_ATTR_STR\((slots|topdown-[a-z-]+),\s*\w+,\s*"event=0x00,umask=(0x[0-9a-f]+)"\)', text):
        topdown[name] = int(umask, 16)
    return maps, topdown


# perf's generic names for PERF_COUNT_HW_* (the aliases ARUM gives them in tables).
GENERIC_NAMES = {
    "CPU_CYCLES": "cycles", "INSTRUCTIONS": "instructions", "CACHE_REFERENCES": "cache-references",
    "CACHE_MISSES": "cache-misses", "BRANCH_INSTRUCTIONS": "branches", "BRANCH_MISSES": "branch-misses",
    "BUS_CYCLES": "bus-cycles", "STALLED_CYCLES_FRONTEND": "stalled-cycles-frontend",
    "STALLED_CYCLES_BACKEND": "stalled-cycles-backend", "REF_CPU_CYCLES": "ref-cycles",
}


# ---------------------------------------------------------------------------------------------
# mapfile.csv: which CPUID strings each model directory serves, as perf matches them
# (tools/perf/arch/x86/util/header.c: "VENDOR-FAMILY-MODEL-STEPPING" with model and stepping in
# upper-case hex; a key without a stepping must match the string without its stepping).
def posix_to_python(regex):
    return regex.replace("[[:xdigit:]]", "[0-9A-Fa-f]")


def read_mapfile():
    rows = []
    claimed = set()
    for line in open(os.path.join(ARCH, "mapfile.csv")).read().splitlines()[1:]:
        if not line.strip():
            continue
        key, version, directory, kind = line.split(",")
        if kind != "core":
            continue
        vendor, family = key.split("-")[:2]
        family = int(family)
        full = key.count("-") == 3
        rx = re.compile(posix_to_python(key))
        hits = set()
        for model in range(256):
            for step in range(16):
                ident = f"{vendor}-{family}-{model:X}-{step:X}"
                target = ident if full else ident.rsplit("-", 1)[0]
                if rx.fullmatch(target) and (vendor, family, model, step) not in claimed:
                    hits.add((model, step))
        claimed |= {(vendor, family, m, s) for m, s in hits}
        rows.append(dict(key=key, version=version, dir=directory, vendor=vendor, family=family,
                         hits=hits))
    return rows


def match_rules(rows):
    """[(family, model ranges, stepping ranges or None)] for the rows of one directory."""
    rules = []
    for r in rows:
        by_steps = collections.defaultdict(set)
        models = sorted({m for m, _ in r["hits"]})
        for m in models:
            steps = frozenset(s for mm, s in r["hits"] if mm == m)
            by_steps[steps].add(m)
        for steps, ms in sorted(by_steps.items(), key=lambda kv: min(kv[1])):
            srs = None if len(steps) == 16 else to_ranges(steps)
            rules.append((r["family"], to_ranges(ms), srs))
    return rules


# Titles of the kernel's model directories.
TITLES = {
    "alderlake": "Intel Alder Lake and Raptor Lake (hybrid: Golden/Raptor Cove + Gracemont)",
    "alderlaken": "Intel Alder Lake-N (Gracemont)",
    "arrowlake": "Intel Arrow Lake (hybrid: Lion Cove + Skymont, Crestmont low-power cores)",
    "bonnell": "Intel Atom (Bonnell, Saltwell)",
    "broadwell": "Intel Broadwell", "broadwellde": "Intel Broadwell-DE",
    "broadwellx": "Intel Broadwell-EP/EX (Xeon E5/E7 v4)",
    "cascadelakex": "Intel Cascade Lake and Cooper Lake (Xeon Scalable 2nd/3rd gen.)",
    "clearwaterforest": "Intel Clearwater Forest (Darkmont)",
    "elkhartlake": "Intel Elkhart Lake and Jasper Lake (Tremont)",
    "emeraldrapids": "Intel Emerald Rapids (Xeon Scalable 5th gen.)",
    "goldmont": "Intel Goldmont (Apollo Lake, Denverton)", "goldmontplus": "Intel Goldmont Plus (Gemini Lake)",
    "grandridge": "Intel Grand Ridge (Crestmont)", "graniterapids": "Intel Granite Rapids (Xeon 6 P-cores)",
    "haswell": "Intel Haswell", "haswellx": "Intel Haswell-EP/EX (Xeon E5/E7 v3)",
    "icelake": "Intel Ice Lake client", "icelakex": "Intel Ice Lake-SP (Xeon Scalable 3rd gen.)",
    "ivybridge": "Intel Ivy Bridge", "ivytown": "Intel Ivy Bridge-EP/EX (Xeon E5/E7 v2)",
    "jaketown": "Intel Sandy Bridge-EP (Xeon E5)",
    "knightslanding": "Intel Xeon Phi (Knights Landing, Knights Mill)",
    "lunarlake": "Intel Lunar Lake (hybrid: Lion Cove + Skymont)",
    "meteorlake": "Intel Meteor Lake (hybrid: Redwood Cove + Crestmont)",
    "nehalemep": "Intel Nehalem (Core i7, Xeon 5500)", "nehalemex": "Intel Nehalem-EX (Xeon 7500)",
    "novalake": "Intel Nova Lake (hybrid)", "pantherlake": "Intel Panther Lake (hybrid: Cougar Cove + Darkmont)",
    "rocketlake": "Intel Rocket Lake (Cypress Cove)", "sandybridge": "Intel Sandy Bridge",
    "sapphirerapids": "Intel Sapphire Rapids (Xeon Scalable 4th gen.)",
    "sierraforest": "Intel Sierra Forest (Xeon 6 E-cores)", "silvermont": "Intel Silvermont and Airmont",
    "skylake": "Intel Skylake, Kaby Lake, Coffee Lake, Comet Lake (client)",
    "skylakex": "Intel Skylake-SP (Xeon Scalable 1st gen.)", "snowridgex": "Intel Snow Ridge (Tremont)",
    "tigerlake": "Intel Tiger Lake", "westmereep-dp": "Intel Westmere-EP (Xeon 5600)",
    "westmereep-sp": "Intel Westmere (Core i3/i5/i7 1st gen. 32 nm)", "westmereex": "Intel Westmere-EX (Xeon E7)",
    "amdzen1": "AMD Zen (family 17h)", "amdzen2": "AMD Zen 2 (family 17h)", "amdzen3": "AMD Zen 3 (family 19h)",
    "amdzen4": "AMD Zen 4 (family 19h)", "amdzen5": "AMD Zen 5 (family 1Ah)", "amdzen6": "AMD Zen 6 (family 1Ah)",
}
# Counter width where it is not 48 bits.
WIDTH = {"bonnell": 40}
# libpfm4 PMUs that cover the same model as a kernel directory (compared, then merged).
PFM_OF = {
    "bonnell": "atom", "nehalemep": "nhm", "nehalemex": "nhm_ex", "westmereep-sp": "wsm",
    "westmereep-dp": "wsm_dp", "sandybridge": "snb", "jaketown": "snb_ep", "ivybridge": "ivb",
    "ivytown": "ivb_ep", "haswell": "hsw", "haswellx": "hsw_ep", "broadwell": "bdw",
    "broadwellx": "bdw_ep", "broadwellde": "bdw_ep", "skylake": "skl", "skylakex": "skx",
    "cascadelakex": "clx", "icelake": "icl", "icelakex": "icx", "sapphirerapids": "spr",
    "silvermont": "slm", "goldmont": "glm", "snowridgex": "tmt", "elkhartlake": "tmt",
    "knightslanding": "knl", "amdzen1": "amd64_fam17h_zen1", "amdzen2": "amd64_fam17h_zen2",
    "amdzen3": "amd64_fam19h_zen3", "amdzen4": "amd64_fam19h_zen4",
}
CORE_UNITS = (None, "cpu_core", "cpu_atom", "cpu_lowpower")

# ARUM's own aliases (names of the original tool), by the first event the model's list has.
ARUM_ALIASES_INTEL = {
    "dcache_accesses": ["MEM_INST_RETIRED.ANY", "MEM_UOPS_RETIRED.ALL"],
    "dcache_misses": ["L1D.REPLACEMENT", "L1D.REPL"],
    "L1_DTLBmiss_L2_DTLBhit": ["DTLB_LOAD_MISSES.STLB_HIT"],
    "L1_L2_DTLBmiss": ["DTLB_LOAD_MISSES.MISS_CAUSES_A_WALK", "DTLB_LOAD_MISSES.WALK_COMPLETED"],
    "dtlb_load_misses": ["DTLB_LOAD_MISSES.WALK_COMPLETED", "DTLB_LOAD_MISSES.MISS_CAUSES_A_WALK"],
    "icache_misses": ["ICACHE_64B.IFTAG_MISS", "ICACHE.MISSES", "ICACHE.MISS"],
}
ARUM_ALIASES_AMD = {
    "dcache_accesses": ["ls_dispatch.ld_dispatch:store_dispatch:ld_st_dispatch"],
    "dcache_misses": ["ls_dmnd_fills_from_sys.all",
                      "ls_dmnd_fills_from_sys.local_l2:local_ccx:near_cache:dram_io_near:far_cache:dram_io_far",
                      "ls_dmnd_fills_from_sys.lcl_l2:int_cache:ext_cache_local:mem_io_local:ext_cache_remote:mem_io_remote",
                      "ls_refills_from_sys.ls_mabresp_lcl_l2:ls_mabresp_lcl_cache:ls_mabresp_lcl_dram:ls_mabresp_rmt_cache:ls_mabresp_rmt_dram",
                      "l2_request_g1.rd_blk_l:rd_blk_x:change_to_x"],
    "L1_DTLBmiss_L2_DTLBhit": ["ls_l1_d_tlb_miss.all_l2_hit",
                               "ls_l1_d_tlb_miss.tlb_reload_4k_l2_hit:tlb_reload_coalesced_page_hit:tlb_reload_2m_l2_hit:tlb_reload_1g_l2_hit"],
    "L1_L2_DTLBmiss": ["ls_l1_d_tlb_miss.all_l2_miss",
                       "ls_l1_d_tlb_miss.tlb_reload_4k_l2_miss:tlb_reload_coalesced_page_miss:tlb_reload_2m_l2_miss:tlb_reload_1g_l2_miss"],
    "dtlb_load_misses": ["ls_l1_d_tlb_miss.all_l2_miss",
                         "ls_l1_d_tlb_miss.tlb_reload_4k_l2_miss:tlb_reload_coalesced_page_miss:tlb_reload_2m_l2_miss:tlb_reload_1g_l2_miss"],
    "icache_misses": ["ic_tag_hit_miss.instruction_cache_miss", "l2_request_g1.cacheable_ic_read"],
}


def hexint(v):
    return int(v.split(",")[0].strip(), 0)


def kernel_events(directory):
    """Core events of one model directory: [{unit, name, event, umask, ...}]."""
    out = []
    for fn in sorted(os.listdir(os.path.join(ARCH, directory))):
        if not fn.endswith(".json") or "metric" in fn or fn.startswith("uncore") or fn == "data-fabric.json":
            continue
        for e in json.load(open(os.path.join(ARCH, directory, fn))):
            if "EventName" not in e or e.get("Unit") not in CORE_UNITS:
                continue
            name = e["EventName"]
            ev = hexint(e["EventCode"]) if "EventCode" in e else 0
            # perf encodes these well-known events by their real codes (jevents.py real_event).
            fixed_real = {"inst_retired.any": (0xC0, 0), "inst_retired.any_p": (0xC0, 0),
                          "cpu_clk_unhalted.thread": (0x3C, 0), "cpu_clk_unhalted.core": (0x3C, 0),
                          "cpu_clk_unhalted.thread_any": (0x3C, 0)}
            umask = int(e.get("UMask", "0"), 0)
            if name.lower() in fixed_real:
                ev, umask = fixed_real[name.lower()]
            if name.lower() == "cpu_clk_unhalted.ref":
                ev, umask = 0, 3
            counters = None
            c = e.get("Counter")
            if c and c.startswith("Fixed counter"):
                counters = ("fixed", int(c.split()[-1]))
            elif c:
                counters = ("gp", [int(x) for x in c.split(",")])
            msr = hexint(e["MSRIndex"]) if e.get("MSRIndex") else 0
            out.append(dict(
                unit=e.get("Unit"), name=name, event=ev, umask=umask,
                cmask=int(e.get("CounterMask", "0"), 0), inv=int(e.get("Invert", "0"), 0),
                edge=int(e.get("EdgeDetect", "0"), 0), any=int(e.get("AnyThread", "0"), 0),
                config1=int(e.get("MSRValue", "0"), 0) if msr else 0, msr=msr,
                counters=counters, deprecated=e.get("Deprecated") == "1"))
    return out


def kernel_metrics(directory):
    out = []
    for fn in sorted(os.listdir(directory)):
        if not fn.endswith(".json") or fn == "metricgroups.json":
            continue
        for e in json.load(open(os.path.join(directory, fn))):
            if "MetricExpr" not in e:
                continue
            out.append(e)
    return out


def encoding(e):
    return (e["event"], e["umask"], e["cmask"], e["inv"], e["edge"], e["any"], e["config1"])


def fmt_encoding(style, e):
    s = f"event=0x{e['event']:02x} umask=0x{e['umask']:02x}"
    for k in ("cmask", "inv", "edge", "any"):
        if e.get(k):
            s += f" {k}={e[k]}"
    if e.get("config1"):
        s += f" config1=0x{e['config1']:x}"
    return s


def norm(name):
    return name.upper().replace(":", ".")


# ---------------------------------------------------------------------------------------------
# Kernel model tables.
def build_kernel_table(directory, rows, gmaps, topdown, pfm_tool, report):
    vendor = rows[0]["vendor"]
    style = "amd" if vendor == "AuthenticAMD" else "intel"
    family = rows[0]["family"]
    flat = kernel_events(directory)
    metrics = kernel_metrics(os.path.join(ARCH, directory))
    units = sorted({e["unit"] for e in flat if e["unit"]})
    # Counters per unit, from the lists' own counter fields.
    pmus = {}
    for u in (units or [None]):
        gp = [i for e in flat if e["unit"] == u and e["counters"] and e["counters"][0] == "gp"
              for i in e["counters"][1]]
        fx = [e["counters"][1] for e in flat if e["unit"] == u and e["counters"] and e["counters"][0] == "fixed"]
        general = max(gp) + 1 if gp else (6 if style == "amd" else 4)
        if style == "amd":
            general = 6
        pmus[u] = dict(general=general, fixed=(max(fx) + 1) if fx else 0, width=WIDTH.get(directory, 48))
    # perf_metrics pseudo-events (topdown-*) where the big core has the slots fixed counter.
    metric_text = " ".join(m["MetricExpr"] for m in metrics)
    for u in (units or [None]):
        if u == "cpu_atom" or u == "cpu_lowpower":
            continue
        if not any(e["unit"] == u and e["name"] == "TOPDOWN.SLOTS" and e["counters"] == ("fixed", 3) for e in flat):
            continue
        for name, umask in topdown.items():
            level2 = name in ("topdown-heavy-ops", "topdown-br-mispredict", "topdown-fetch-lat", "topdown-mem-bound")
            if level2 and name.replace("-", "\\\\-") not in metric_text and name not in metric_text.replace("\\", ""):
                continue
            flat.append(dict(unit=u, name=name, event=0, umask=umask, cmask=0, inv=0, edge=0, any=0,
                             config1=0, msr=0, counters=("fixed", 3) if name == "slots" else ("metrics", 0),
                             deprecated=False, topdown=True, src="kc"))
    # libpfm4 comparison and merge.
    pfm_name = PFM_OF.get(directory)
    pfm = pfm_flat(style, dump(pfm_name, pfm_tool)) if pfm_name else {}
    src = {}
    kernel_names = {}
    for e in flat:
        kernel_names.setdefault(norm(e["name"]), e)
    by_enc = {}
    for e in flat:
        by_enc.setdefault(encoding(e), e["name"])
    pfm_by_enc = {}
    for n, f in pfm.items():
        pfm_by_enc.setdefault(encoding(f), n)
    lines = []
    if pfm:
        differ, k_only, p_only = [], [], []
        for e in flat:
            if e.get("topdown"):
                continue
            key = norm(e["name"])
            p = pfm.get(next((n for n in pfm if norm(n) == key), ""), None)
            if p is not None:
                if encoding(p) == encoding(e):
                    src[(e["unit"], e["name"])] = "k,p"
                else:
                    src[(e["unit"], e["name"])] = "k!p"
                    differ.append(f"  differ      {e['name']}{' [' + e['unit'] + ']' if e['unit'] else ''}: kernel {fmt_encoding(style, e)}; libpfm4 {fmt_encoding(style, p)}")
            elif encoding(e) in pfm_by_enc:
                src[(e["unit"], e["name"])] = "k~p"
                k_only.append(f"  kernel only {e['name']} (libpfm4 has its encoding as {pfm_by_enc[encoding(e)]})")
            else:
                src[(e["unit"], e["name"])] = "k"
                k_only.append(f"  kernel only {e['name']}: {fmt_encoding(style, e)}")
        extra = []
        for n, f in pfm.items():
            if norm(n) in kernel_names:
                continue
            same = by_enc.get(encoding(f))
            p_only.append(f"  libpfm4 only {n}: {fmt_encoding(style, f)}" + (f" (the kernel's {same} has this encoding)" if same else ""))
            extra.append((n, f, "p~k" if same else "p"))
        lines.append(f"== {directory} (Linux {KVER} {directory} {rows[0]['version']}) vs libpfm4 {pfm_name}: "
                     f"{sum(1 for v in src.values() if v == 'k,p')} agree, {len(differ)} differ, "
                     f"{len(k_only)} only in the kernel's list, {len(p_only)} only in libpfm4's")
        lines += differ + k_only + p_only
        report.extend(lines)
        report.append("")
    else:
        extra = []
    # Group "PREFIX.SUFFIX" names into events with unit masks.
    groups = collections.OrderedDict()
    spelling = {}
    for e in flat:
        prefix, _, suffix = e["name"].partition(".")
        spelling.setdefault((e["unit"], prefix.upper()), prefix)
        groups.setdefault((e["unit"], prefix.upper()), []).append((suffix, e))
    for n, f, s in extra:
        prefix, _, suffix = n.partition(":")
        spelling.setdefault((None, prefix.upper()), prefix)
        g = groups.setdefault((None, prefix.upper()), [])
        g.append((suffix, dict(unit=None, name=n, event=f["event"], umask=f["umask"], cmask=f["cmask"],
                                inv=f["inv"], edge=f["edge"], any=f["any"], config1=f["config1"], msr=0,
                                counters=None, deprecated=False, src=s)))
    name = "amd-" + directory[3:] if directory.startswith("amdzen") else "intel-" + directory
    w = []
    a = w.append
    a(f"# {TITLES[directory]}: core events and metrics.")
    a(f"# Sources: Linux {KVER} tools/perf/pmu-events/arch/x86/{directory} ({rows[0]['version']}), "
      f"generic-event maps of arch/x86/events/{'amd' if style == 'amd' else 'intel'}/core.c"
      + (f"; libpfm4 4.13 PMU {pfm_name} (compared; its extra names kept)" if pfm_name else "") + ".")
    a("# Descriptions are ARUM's own. Generated by tools/event-tables/gen-tables.py: do not edit by hand.")
    a(HEADER_FIELDS)
    a("")
    a("[table]")
    a(f"name = {toml_str(name)}")
    a(f"title = {toml_str(TITLES[directory])}")
    a(f"vendor = {toml_str(vendor)}")
    a(f"style = {toml_str(style)}")
    a('separator = "."')
    if units:
        a(f"units = {toml_str(units)}")
    srcs = {"k": f"Linux {KVER} tools/perf/pmu-events/arch/x86/{directory} ({rows[0]['version']})"}
    if any(e.get("topdown") for e in flat):
        srcs["kc"] = f"Linux {KVER} arch/x86/events/intel/core.c (the PERF_METRICS events slots and topdown-*)"
    if pfm_name:
        srcs["p"] = f"libpfm4 4.13 {pfm_name}"
    a("sources = { " + ", ".join(f"{k} = {toml_str(v)}" for k, v in srcs.items()) + " }")
    for fam, models, steps in match_rules(rows):
        a("")
        a("[[table.match]]")
        a(f"family = 0x{fam:02X}")
        a(f"models = {fmt_ranges(models)}")
        if steps:
            a(f"steppings = {fmt_ranges(steps)}")
    main_unit = "cpu_core" if "cpu_core" in units else None
    p = pmus[main_unit] if main_unit in pmus else next(iter(pmus.values()))
    a("")
    a("[pmu]")
    a(f"general_counters = {p['general']}")
    a(f"counter_width = {p['width']}")
    if p["fixed"]:
        a(f"fixed_counters = {p['fixed']}")
        a(f"fixed_width = {p['width']}")
    for u in units:
        q = pmus[u]
        a("")
        a("[[unit]]")
        a(f"name = {toml_str(u)}")
        a(f"general_counters = {q['general']}")
        a(f"counter_width = {q['width']}")
        if q["fixed"]:
            a(f"fixed_counters = {q['fixed']}")
            a(f"fixed_width = {q['width']}")
    # Aliases: perf's generic names by the kernel's own map, then ARUM's names.
    gmap = generic_map_for(directory, style, gmaps)
    aliases = collections.OrderedDict()

    def find(unit, enc_cfg):
        ev = enc_cfg & 0xFF | ((enc_cfg >> 32) & 0xF) << 8
        um = (enc_cfg >> 8) & 0xFF
        cands = [e for e in flat if e["unit"] == unit and e["event"] == ev and e["umask"] == um
                 and not (e["cmask"] or e["inv"] or e["edge"] or e["any"] or e["config1"]) and not e["deprecated"]]
        # The one that can also use a fixed counter, else the shortest name.
        cands.sort(key=lambda e: (e["counters"] is None or e["counters"][0] != "fixed", len(e["name"]), e["name"]))
        return cands[0]["name"] if cands else None

    for key, cfg in gmap.items():
        generic = GENERIC_NAMES[key]
        per_unit = {u: find(u, cfg) for u in (units or [None])}
        if all(v is None for v in per_unit.values()):
            continue
        aliases[generic] = per_unit
    arum = ARUM_ALIASES_AMD if style == "amd" else ARUM_ALIASES_INTEL
    for alias, cands in arum.items():
        per_unit = {}
        for u in (units or [None]):
            for c in cands:
                if resolvable(flat, u, c):
                    per_unit[u] = c
                    break
        if per_unit:
            aliases[alias] = per_unit
    # ARUM's llc_* names mean the last-level cache: the kernel's cache-* on Intel; on Zen the
    # kernel maps cache-* to L2 events (the L3 is an uncore PMU), so they get no llc_* alias there.
    for alias, generic in (("llc_references", "cache-references"), ("llc_misses", "cache-misses"),
                           ("branch_misses", "branch-misses")):
        if generic in aliases and (style == "intel" or alias == "branch_misses"):
            aliases[alias] = aliases[generic]
    a("")
    a("[aliases]")
    for k, per_unit in aliases.items():
        vals = {u: v for u, v in per_unit.items() if v}
        key = k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else toml_str(k)
        if list(vals) == [None]:
            a(f"{key} = {toml_str(vals[None])}")
        else:
            a(f"{key} = {{ " + ", ".join(f"{u} = {toml_str(v)}" for u, v in vals.items()) + " }")
    # Events.
    for (unit, key), members in groups.items():
        prefix = spelling[(unit, key)]
        a("")
        a("[[event]]")
        a(f"name = {toml_str(prefix)}")
        plain = [m for s, m in members if s == ""]
        masked = [(s, m) for s, m in members if s != ""]
        base = plain[0] if plain else members[0][1]
        if unit:
            a(f"unit = {toml_str(unit)}")
        a(f"event = 0x{base['event']:02X}")
        a(f"desc = {toml_str(sentence(words(prefix)))}")
        if plain:
            # The prefix is itself an event (no unit-mask name), named alone with its own encoding.
            if masked:
                a("plain = true")
            write_fields(a, plain[0], base, style, pmus.get(unit, p), directory, src, event_level=True)
        if masked:
            a("mask = [")
            for s, m in masked:
                parts = [f"name = {toml_str(s)}", f"value = 0x{m['umask']:02X}"]
                parts += field_parts(m, base, style, pmus.get(unit, p), directory, src)
                parts.append(f"desc = {toml_str(sentence(words(s)))}")
                a("  { " + ", ".join(parts) + " },")
            a("]")
    # Metrics.
    for m in metrics:
        w.extend(metric_block(m))
    return name, "\n".join(w) + "\n", len(flat), len(metrics)


def resolvable(flat, unit, spec):
    head, *more = spec.split(":")
    prefix, _, first = head.partition(".")
    names = {e["name"].upper() for e in flat if e["unit"] == unit}
    if not first:
        return head.upper() in names and not more
    return all(f"{prefix}.{s}".upper() in names for s in [first] + more)


def generic_map_for(directory, style, gmaps):
    if style == "intel":
        return gmaps["intel_perfmon_event_map"]
    return {"amdzen1": gmaps["amd_zen1_perfmon_event_map"], "amdzen2": gmaps["amd_zen2_perfmon_event_map"],
            "amdzen3": gmaps["amd_zen2_perfmon_event_map"]}.get(directory, gmaps["amd_zen4_perfmon_event_map"])


def counters_of(e, pmu):
    c = e["counters"]
    if c is None:
        return None
    kind, v = c
    if kind == "fixed":
        # A real event code can also use the general counters; code 0 is a fixed-only pseudo code.
        gp = list(range(pmu["general"])) if e["event"] != 0 else []
        return gp + [32 + v]
    if kind == "metrics":
        # The PERF_METRICS pseudo counters (INTEL_PMC_IDX_METRIC_BASE + n in Linux), read with slots.
        return [48 + (e["umask"] & 0xF)]
    if sorted(v) == list(range(pmu["general"])) or max(v) >= pmu["general"]:
        return None
    return v


def field_parts(m, base, style, pmu, directory, src):
    parts = []
    if m["event"] != base["event"]:
        parts.append(f"event = 0x{m['event']:02X}")
    for k in ("cmask", "inv", "edge", "any"):
        if m[k]:
            parts.append(f"{k} = {m[k]}")
    if m["config1"]:
        parts.append(f"config1 = 0x{m['config1']:X}")
    if m["msr"]:
        parts.append(f"msr = 0x{m['msr']:X}")
    c = counters_of(m, pmu)
    if c is not None:
        parts.append(f"counters = {c}")
    if style == "amd" and m["event"] == 0x03:
        parts.append("pair = true")
    if m["deprecated"]:
        parts.append("deprecated = true")
    s = m.get("src") or src.get((m["unit"], m["name"]))
    if s:
        parts.append(f"src = {toml_str(s)}")
    return parts


def write_fields(a, m, base, style, pmu, directory, src, event_level):
    if m["umask"]:
        a(f"umask = 0x{m['umask']:02X}")
    for part in field_parts(m, base, style, pmu, directory, src):
        a(part)


def metric_block(m):
    """A [[metric]] table (after the events: a key at the top would belong to the last table)."""
    lines = ["", "[[metric]]", f"name = {toml_str(m['MetricName'])}", f"expr = {toml_str(m['MetricExpr'])}"]
    if m.get("MetricGroup"):
        lines.append(f"groups = {toml_str(m['MetricGroup'])}")
    if m.get("ScaleUnit"):
        lines.append(f"unit = {toml_str(m['ScaleUnit'])}")
    if m.get("MetricThreshold"):
        lines.append(f"threshold = {toml_str(m['MetricThreshold'])}")
    if m.get("Unit") and m.get("Unit") in CORE_UNITS:
        # Metrics of uncore units (IIO, ...) read uncore events, which resolution reports.
        lines.append(f"pmu = {toml_str(m.get('Unit'))}")
    return lines


def build_common_metrics():
    w = ["# Metrics of every CPU (perf's common metrics): built on generic and software events.",
         f"# Source: Linux {KVER} tools/perf/pmu-events/arch/common/common/metrics.json (names, expressions,",
         "# groups, units). Generated by tools/event-tables/gen-tables.py: do not edit by hand.",
         "",
         "[table]",
         'name = "common"',
         'title = "Metrics of every CPU"',
         'vendor = ""',
         'style = "intel"',
         f'sources = {{ k = "Linux {KVER} tools/perf/pmu-events/arch/common/common/metrics.json" }}',
         "",
         "[pmu]",
         "general_counters = 0",
         "counter_width = 0"]
    metrics = kernel_metrics(COMMON)
    for m in metrics:
        w.extend(metric_block(m))
    return "\n".join(w) + "\n", len(metrics)


# ---------------------------------------------------------------------------------------------
# libpfm4 tables for the models the kernel has no list for.
def mr(*ranges):
    return [list(r) for r in ranges]


AMD_ALIASES_K8 = {
    "dcache_accesses": "DATA_CACHE_ACCESSES",
    "dcache_misses": "DATA_CACHE_MISSES",
    "L1_DTLBmiss_L2_DTLBhit": "L1_DTLB_MISS_AND_L2_DTLB_HIT",
    "L1_L2_DTLBmiss": "L1_DTLB_AND_L2_DTLB_MISS",
    "cycles": "CPU_CLK_UNHALTED",
    "instructions": "RETIRED_INSTRUCTIONS",
    "branches": "RETIRED_BRANCH_INSTRUCTIONS",
    "branch_misses": "RETIRED_MISPREDICTED_BRANCH_INSTRUCTIONS",
    "llc_references": "REQUESTS_TO_L2",
    "llc_misses": "L2_CACHE_MISS",
    "dtlb_load_misses": "L1_DTLB_AND_L2_DTLB_MISS",
    "icache_misses": "INSTRUCTION_CACHE_MISSES",
}
AMD_ALIASES_10H = dict(AMD_ALIASES_K8,
                       llc_references="READ_REQUEST_TO_L3_CACHE",
                       llc_misses="L3_CACHE_MISSES")
# Families 11h-16h: L2 is the last level the core sees (15h's L3 is a northbridge/uncore event).
AMD_ALIASES_CAT = dict(AMD_ALIASES_K8)
AMD_ALIASES_14H = dict(AMD_ALIASES_K8, L1_L2_DTLBmiss="DTLB_MISS", dtlb_load_misses="DTLB_MISS")
AMD_ALIASES_15H = dict(AMD_ALIASES_K8, L1_DTLBmiss_L2_DTLBhit="UNIFIED_TLB_HIT",
                       L1_L2_DTLBmiss="UNIFIED_TLB_MISS", dtlb_load_misses="UNIFIED_TLB_MISS")
AMD_ALIASES_16H = {k: v for k, v in AMD_ALIASES_14H.items() if k not in ("llc_references", "llc_misses")}

# Intel Core 2 (SDM vol. 3B, non-architectural events of the Intel Core microarchitecture).
# ("fixed", config, idx) | ("event", ev, counter mask)
CORE2_RULES = [("fixed", 0x00C0, 0), ("fixed", 0x003C, 1), ("fixed", 0x0300, 2),
               *[("event", e, 0x1) for e in (0xCB, 0x10, 0x14, 0x18, 0xA1)],
               *[("event", e, 0x2) for e in (0x11, 0x12, 0x13, 0x19)]]


def f15h_counters(ev, um):
    """Family 15h counter restrictions, as in Linux amd_get_event_constraints_f15h."""
    pmc = {"PMC0": [0], "PMC20": [0, 1, 2], "PMC3": [3], "PMC30": [0, 3], "PMC50": None,
           "PMC53": [3, 4, 5], "none": []}
    kind = ev & 0xF0
    pop = bin(um).count("1")
    if kind in (0x00, 0x10):
        if ev == 0x000:
            return pmc["PMC53"] if not (um & 0xF0 and um & 0x0F) else pmc["PMC3"]
        if ev == 0x004:
            return pmc["PMC53"] if pop <= 1 else pmc["PMC3"]
        if ev in (0x003, 0x00B, 0x00D):
            return pmc["PMC3"]
        return pmc["PMC53"]
    if kind in (0x20, 0x30, 0x40, 0x50, 0xC0):
        if ev in (0x023, 0x043, 0x045, 0x046, 0x054, 0x055):
            return pmc["PMC20"]
        if ev == 0x02D:
            return pmc["PMC3"]
        if ev == 0x02E:
            return pmc["PMC30"]
        if ev == 0x031:
            return pmc["PMC20"] if pop <= 1 else pmc["none"]
        if ev == 0x1C0:
            return pmc["PMC53"]
        return pmc["PMC50"]
    if kind in (0x60, 0x70, 0x80, 0x90, 0xD0):
        if ev in (0x08F, 0x187, 0x188):
            return pmc["PMC0"]
        if 0x0DB <= ev <= 0x0DF or ev in (0x1D6, 0x1D8):
            return pmc["PMC50"]
        return pmc["PMC20"]
    return pmc["none"]  # northbridge events: uncore since Linux 3.x


PFM_TABLES = [
    dict(file="amd-k8", title="AMD K8 (Athlon 64, Opteron, Turion 64), family 0Fh", style="amd",
         vendor="AuthenticAMD", family=0x0F, models=mr((0x00, 0xFF)),
         revisions=[("amd64_k8_revc", mr((0x00, 0x0F), (0x90, 0xBF), (0xD0, 0xFF))),
                    ("amd64_k8_revd", mr((0x10, 0x1F))), ("amd64_k8_reve", mr((0x20, 0x3F))),
                    ("amd64_k8_revf", mr((0x40, 0x5F), (0xC0, 0xCF))),
                    ("amd64_k8_revg", mr((0x60, 0x8F)))],
         general=4, width=48, aliases=AMD_ALIASES_K8,
         sources="AMD BKDG for Athlon 64 and Opteron (26094) and for NPT family 0Fh (32559); values via libpfm4 amd64_k8_rev{b..g}"),
    dict(file="amd-fam10h", title="AMD family 10h (Barcelona, Shanghai, Istanbul, Phenom)", style="amd",
         vendor="AuthenticAMD", family=0x10, models=mr((0x00, 0xFF)),
         revisions=[("amd64_fam10h_barcelona", mr((0x00, 0x03))),
                    ("amd64_fam10h_shanghai", mr((0x04, 0x07))),
                    ("amd64_fam10h_istanbul", mr((0x08, 0xFF)))],
         general=4, width=48, aliases=AMD_ALIASES_10H,
         sources="AMD BKDG for family 10h (31116), section 3.14; values via libpfm4 amd64_fam10h_{barcelona,shanghai,istanbul}"),
    dict(file="amd-fam11h", title="AMD family 11h (Turion X2 Ultra, Griffin)", style="amd",
         vendor="AuthenticAMD", family=0x11, models=mr((0x00, 0xFF)),
         revisions=[("amd64_fam11h_turion", None)], general=4, width=48, aliases=AMD_ALIASES_CAT,
         sources="AMD BKDG for family 11h (41256); values via libpfm4 amd64_fam11h_turion"),
    dict(file="amd-fam12h", title="AMD family 12h (Llano)", style="amd",
         vendor="AuthenticAMD", family=0x12, models=mr((0x00, 0xFF)),
         revisions=[("amd64_fam12h_llano", None)], general=4, width=48, aliases=AMD_ALIASES_CAT,
         sources="AMD BKDG for family 12h (41131); values via libpfm4 amd64_fam12h_llano"),
    dict(file="amd-fam14h", title="AMD family 14h (Bobcat: E-, C- and G-series)", style="amd",
         vendor="AuthenticAMD", family=0x14, models=mr((0x00, 0xFF)),
         revisions=[("amd64_fam14h_bobcat", None)], general=4, width=48, aliases=AMD_ALIASES_14H,
         sources="AMD BKDG for family 14h (43170); values via libpfm4 amd64_fam14h_bobcat"),
    dict(file="amd-fam15h", title="AMD family 15h (Bulldozer, Piledriver, Steamroller, Excavator)", style="amd",
         vendor="AuthenticAMD", family=0x15, models=mr((0x00, 0xFF)),
         revisions=[("amd64_fam15h_interlagos", None)], general=6, width=48,
         aliases=AMD_ALIASES_15H,
         counter_rule=f15h_counters,
         sources="AMD BKDG for family 15h models 00h-0Fh (42301); values via libpfm4 amd64_fam15h_interlagos; counter restrictions as in Linux amd_get_event_constraints_f15h"),
    dict(file="amd-fam16h", title="AMD family 16h (Jaguar, Puma)", style="amd",
         vendor="AuthenticAMD", family=0x16, models=mr((0x00, 0xFF)),
         revisions=[("amd64_fam16h", None)], general=4, width=48, aliases=AMD_ALIASES_16H,
         sources="AMD BKDG for family 16h models 00h-0Fh (48751); values via libpfm4 amd64_fam16h"),
    dict(file="intel-core2", title="Intel Core microarchitecture (Core 2, Xeon 5100/5300/5400/7400)", style="intel",
         vendor="GenuineIntel", family=6, models=mr((0x0F, 0x0F), (0x16, 0x17), (0x1D, 0x1D)),
         revisions=[("core", None)], general=2, width=40, fixed=3, fixed_width=40, rules=CORE2_RULES,
         aliases={"dcache_accesses": "L1D_ALL_REF", "dcache_misses": "L1D_REPL",
                  "L1_L2_DTLBmiss": "DTLB_MISSES:ANY", "cycles": "UNHALTED_CORE_CYCLES",
                  "instructions": "INSTRUCTIONS_RETIRED", "branches": "BR_INST_RETIRED:ANY",
                  "branch_misses": "BR_INST_RETIRED_MISPRED",
                  "llc_references": "LAST_LEVEL_CACHE_REFERENCES",
                  "llc_misses": "LAST_LEVEL_CACHE_MISSES", "dtlb_load_misses": "DTLB_MISSES:MISS_LD",
                  "icache_misses": "L1I_MISSES", "ref-cycles": "UNHALTED_REFERENCE_CYCLES",
                  "bus-cycles": "CPU_CLK_UNHALTED:BUS"},
         sources="Intel SDM vol. 3B, events of the Intel Core microarchitecture; values via libpfm4 core"),
    dict(file="intel-netburst", title="Intel NetBurst (Pentium 4, Xeon), family 0Fh", style="netburst",
         vendor="GenuineIntel", family=0x0F, models=mr((0x00, 0x06)),
         revisions=[("netburst_p", None)], general=18, width=40,
         aliases={"cycles": "global_power_events:RUNNING",
                  "instructions": "instr_retired:NBOGUSNTAG:BOGUSNTAG",
                  "branches": "retired_branch_type:CONDITIONAL:CALL:RETURN:INDIRECT",
                  "branch_misses": "mispred_branch_retired:NBOGUS",
                  "llc_references": "BSQ_cache_reference:RD_2ndL_HITS:RD_2ndL_HITE:RD_2ndL_HITM:RD_3rdL_HITS:RD_3rdL_HITE:RD_3rdL_HITM",
                  "llc_misses": "BSQ_cache_reference:RD_2ndL_MISS:RD_3rdL_MISS:WR_2ndL_MISS",
                  "L1_L2_DTLBmiss": "page_walk_type:DTMISS",
                  "icache_misses": "BPU_fetch_request:TCMISS"},
         sources="Intel SDM vol. 3B, NetBurst performance monitoring; ESCR/CCCR values via libpfm4 netburst_p; counter binding and P4 event index as in Linux arch/x86/events/intel/p4.c; tagging as in the SDM"),
]

# Hand-written descriptions for the events the aliases name (and a few other staples).
DESC = {
    "DATA_CACHE_ACCESSES": "Loads and stores that access the L1 data cache",
    "DATA_CACHE_MISSES": "L1 data cache accesses that miss and need a line from L2 or memory",
    "L1_DTLB_MISS_AND_L2_DTLB_HIT": "Accesses that miss the L1 data TLB but find the translation in the L2 TLB",
    "L1_DTLB_AND_L2_DTLB_MISS": "Accesses whose translation misses both data TLB levels (page walk needed)",
    "CPU_CLK_UNHALTED": "Core clock cycles while the processor is not halted",
    "RETIRED_INSTRUCTIONS": "Instructions retired",
    "RETIRED_BRANCH_INSTRUCTIONS": "Branch instructions retired",
    "RETIRED_MISPREDICTED_BRANCH_INSTRUCTIONS": "Retired branch instructions that were mispredicted",
    "REQUESTS_TO_L2": "Requests sent to the L2 cache (the last level on K8)",
    "L2_CACHE_MISS": "L2 cache requests that miss",
    "READ_REQUEST_TO_L3_CACHE": "Read requests sent to the shared L3 cache",
    "L3_CACHE_MISSES": "L3 cache read requests that miss",
    "INSTRUCTION_CACHE_MISSES": "Instruction fetches that miss the L1 instruction cache",
    "L1D_ALL_REF": "All references to the L1 data cache",
    "L1D_REPL": "Cache lines brought into the L1 data cache",
    "DTLB_MISSES": "Memory accesses that miss the data TLB",
    "UNHALTED_CORE_CYCLES": "Core clock cycles while the core is not halted (architectural event)",
    "UNHALTED_REFERENCE_CYCLES": "Reference clock cycles while the core is not halted (fixed counter)",
    "INSTRUCTION_RETIRED": "Instructions retired (architectural event)",
    "INSTRUCTIONS_RETIRED": "Instructions retired (architectural event)",
    "BR_INST_RETIRED": "Branch instructions retired",
    "BR_INST_RETIRED_MISPRED": "Retired branch instructions that were mispredicted",
    "LAST_LEVEL_CACHE_REFERENCES": "Requests that reach the last-level cache (architectural event)",
    "LAST_LEVEL_CACHE_MISSES": "Last-level cache requests that miss (architectural event)",
    "L1I_MISSES": "Instruction fetches that miss the L1 instruction cache",
    "global_power_events": "Time during which the processor is not stopped",
    "instr_retired": "Instructions retired, by bogus/non-bogus and tagging",
    "retired_branch_type": "Retired branches, by type",
    "mispred_branch_retired": "Mispredicted retired branches",
    "BSQ_cache_reference": "L2/L3 cache references seen by the bus sequence queue",
    "page_walk_type": "Page walks by the page miss handler (data or instruction TLB miss)",
    "BPU_fetch_request": "Instruction fetch requests from the branch prediction unit",
    "replay_event": "Retired micro-ops that were replayed; the kind of replay is chosen by replay tagging",
}

# NetBurst: the kernel's ESCR pairs and counters per event (arch/x86/events/intel/p4.c),
# keyed by the kernel's P4 event index, which libpfm's perf encoding carries.
P4_ESCR_MSR = {
    "BSU_ESCR0": 0x3A0, "BSU_ESCR1": 0x3A1, "FSB_ESCR0": 0x3A2, "FSB_ESCR1": 0x3A3,
    "FIRM_ESCR0": 0x3A4, "FIRM_ESCR1": 0x3A5, "FLAME_ESCR0": 0x3A6, "FLAME_ESCR1": 0x3A7,
    "DAC_ESCR0": 0x3A8, "DAC_ESCR1": 0x3A9, "MOB_ESCR0": 0x3AA, "MOB_ESCR1": 0x3AB,
    "PMH_ESCR0": 0x3AC, "PMH_ESCR1": 0x3AD, "SAAT_ESCR0": 0x3AE, "SAAT_ESCR1": 0x3AF,
    "U2L_ESCR0": 0x3B0, "U2L_ESCR1": 0x3B1, "BPU_ESCR0": 0x3B2, "BPU_ESCR1": 0x3B3,
    "IS_ESCR0": 0x3B4, "IS_ESCR1": 0x3B5, "ITLB_ESCR0": 0x3B6, "ITLB_ESCR1": 0x3B7,
    "CRU_ESCR0": 0x3B8, "CRU_ESCR1": 0x3B9, "IQ_ESCR0": 0x3BA, "IQ_ESCR1": 0x3BB,
    "RAT_ESCR0": 0x3BC, "RAT_ESCR1": 0x3BD, "SSU_ESCR0": 0x3BE, "MS_ESCR0": 0x3C0,
    "MS_ESCR1": 0x3C1, "TBPU_ESCR0": 0x3C2, "TBPU_ESCR1": 0x3C3, "TC_ESCR0": 0x3C4,
    "TC_ESCR1": 0x3C5, "IX_ESCR0": 0x3C8, "IX_ESCR1": 0x3C9, "ALF_ESCR0": 0x3CA,
    "ALF_ESCR1": 0x3CB, "CRU_ESCR2": 0x3CC, "CRU_ESCR3": 0x3CD, "CRU_ESCR4": 0x3E0,
    "CRU_ESCR5": 0x3E1,
}
P4_BIND = {  # index: (ESCR for thread 0, ESCR for thread 1, counters for each)
    0: ("TC_ESCR0", "TC_ESCR1", [4, 5], [6, 7]), 1: ("BPU_ESCR0", "BPU_ESCR1", [0], [2]),
    2: ("ITLB_ESCR0", "ITLB_ESCR1", [0], [2]), 3: ("DAC_ESCR0", "DAC_ESCR1", [8, 9], [10, 11]),
    4: ("SAAT_ESCR0", "SAAT_ESCR1", [8, 9], [10, 11]), 5: ("SAAT_ESCR0", "SAAT_ESCR1", [8, 9], [10, 11]),
    6: ("SAAT_ESCR0", "SAAT_ESCR1", [8, 9], [10, 11]), 7: ("MOB_ESCR0", "MOB_ESCR1", [0], [2]),
    8: ("PMH_ESCR0", "PMH_ESCR1", [0], [2]), 9: ("BSU_ESCR0", "BSU_ESCR1", [0], [2]),
    10: ("FSB_ESCR0", "FSB_ESCR1", [0], [2]), 11: ("FSB_ESCR1", "FSB_ESCR1", [2], [3]),
    12: ("FSB_ESCR0", "FSB_ESCR1", [0], [2]), 13: ("BSU_ESCR0", "BSU_ESCR0", [0], [1]),
    14: ("BSU_ESCR1", "BSU_ESCR1", [2], [3]),
    **{i: ("FIRM_ESCR0", "FIRM_ESCR1", [8, 9], [10, 11]) for i in range(15, 23)},
    23: ("TC_ESCR0", "TC_ESCR1", [4, 5], [6, 7]), 24: ("FSB_ESCR0", "FSB_ESCR1", [0], [2]),
    25: ("MS_ESCR0", "MS_ESCR1", [4, 5], [6, 7]), 26: ("MS_ESCR0", "MS_ESCR1", [4, 5], [6, 7]),
    27: ("TBPU_ESCR0", "TBPU_ESCR0", [4, 5], [6, 7]), 28: ("TBPU_ESCR0", "TBPU_ESCR1", [4, 5], [6, 7]),
    29: ("ALF_ESCR0", "ALF_ESCR1", [12, 13, 16], [14, 15, 17]),
    30: ("DAC_ESCR0", "DAC_ESCR1", [8, 9], [10, 11]), 31: ("FSB_ESCR0", "FSB_ESCR1", [0], [2]),
    32: ("FSB_ESCR0", "FSB_ESCR1", [0], [2]), 33: ("FSB_ESCR0", "FSB_ESCR1", [0], [2]),
    34: ("FSB_ESCR0", "FSB_ESCR1", [0], [2]),
    **{i: ("CRU_ESCR2", "CRU_ESCR3", [12, 13, 16], [14, 15, 17]) for i in (35, 36, 37)},
    38: ("CRU_ESCR0", "CRU_ESCR1", [12, 13, 16], [14, 15, 17]),
    39: ("CRU_ESCR0", "CRU_ESCR1", [12, 13, 16], [14, 15, 17]),
    40: ("RAT_ESCR0", "RAT_ESCR1", [12, 13, 16], [14, 15, 17]),
    41: ("CRU_ESCR2", "CRU_ESCR3", [12, 13, 16], [14, 15, 17]),
    42: ("CRU_ESCR0", "CRU_ESCR1", [12, 13, 16], [14, 15, 17]),
    43: ("CRU_ESCR2", "CRU_ESCR3", [12, 13, 16], [14, 15, 17]),
    44: ("CRU_ESCR2", "CRU_ESCR3", [12, 13, 16], [14, 15, 17]),
    45: ("CRU_ESCR0", "CRU_ESCR1", [12, 13, 16], [14, 15, 17]),
}
P4_EVENT_COUNT = 46
# Replay tagging (SDM vol. 3B, "Metrics That Utilize Replay Tagging Mechanism"): the kind of
# replay replay_event counts is chosen by IA32_PEBS_ENABLE (3F1H) and MSR_PEBS_MATRIX_VERT (3F2H),
# not by its ESCR event mask (which has only NBOGUS and BOGUS). PEBS_ENABLE bit 24 enables
# micro-op tagging and bit 25 PEBS, as the SDM lists for every metric. `metric` is Linux's
# P4_PEBS_METRIC index, which the perf back-end carries in config bits 0-6 (p4.c p4_pebs_bind_map).
# libpfm4 names (its pseudo mask bits 2-10) → (SDM metric, PEBS_ENABLE, MATRIX_VERT, Linux metric).
P4_REPLAY = {
    "L1_LD_MISS": ("1stL_cache_load_miss_retired", 1 << 0 | 1 << 24 | 1 << 25, 1 << 0, 1),
    "L2_LD_MISS": ("2ndL_cache_load_miss_retired", 1 << 1 | 1 << 24 | 1 << 25, 1 << 0, 2),
    "DTLB_LD_MISS": ("DTLB_load_miss_retired", 1 << 2 | 1 << 24 | 1 << 25, 1 << 0, 3),
    "DTLB_ST_MISS": ("DTLB_store_miss_retired", 1 << 2 | 1 << 24 | 1 << 25, 1 << 1, 4),
    "DTLB_ALL_MISS": ("DTLB_all_miss_retired", 1 << 2 | 1 << 24 | 1 << 25, 1 << 0 | 1 << 1, 5),
    "BR_MSP": ("Tagged_mispred_branch", 1 << 15 | 1 << 16 | 1 << 24 | 1 << 25, 1 << 4, 6),
    "MOB_LD_REPLAY": ("MOB_load_replay_retired", 1 << 9 | 1 << 24 | 1 << 25, 1 << 0, 7),
    "SP_LD_RET": ("split_load_retired", 1 << 10 | 1 << 24 | 1 << 25, 1 << 0, 8),
    "SP_ST_RET": ("split_store_retired", 1 << 10 | 1 << 24 | 1 << 25, 1 << 1, 9),
}
# Execution tagging (SDM vol. 3B, "Tagging Mechanism for Execution_event"): these "upstream"
# events tag the micro-ops they count with a tag value (ESCR bits 8:5, enabled by bit 4) that
# execution_event then counts; libpfm4 gives the tags as pseudo mask bits 16-19.
P4_TAGGING = {"packed_SP_uop", "packed_DP_uop", "scalar_SP_uop", "scalar_DP_uop",
              "64bit_MMX_uop", "128bit_MMX_uop", "x87_FP_uop", "x87_SIMD_moves_uop"}


def counters_list(t, ev, um):
    """Counters that may hold event ev with unit mask um: general 0.., fixed 32+i; None = any
    general counter."""
    if t.get("counter_rule"):
        return t["counter_rule"](ev, um)
    cfg = ev | (um << 8)
    for r in t.get("rules") or []:
        if r[0] == "fixed" and r[1] == cfg:
            # A real event code can also use the general counters; code 0 is a fixed-only pseudo code.
            return ([] if ev == 0 else list(range(t["general"]))) + [32 + r[2]]
        if r[0] == "event" and r[1] == ev:
            return [i for i in range(8) if r[2] >> i & 1]
    return None


def build_pfm(t, tool):
    style = t["style"]
    revs = [(pmu, ranges, dump(pmu, tool)) for pmu, ranges in t["revisions"]]
    events = {}
    order = []
    for pmu, ranges, rows in revs:
        for r in rows:
            name = r["event"]
            e = events.get(name)
            if e is None:
                e = events[name] = {"models": [], "umasks": {}, "plain": {}, "code": r["code"]}
                order.append(name)
            if "umask" not in r:
                if ranges is not None and ranges not in [m for m in e["models"]]:
                    e["models"].append(ranges)
                e["plain"][pmu] = r
                continue
            uname = NETBURST_RENAME.get((name, r["umask"]), r["umask"]) if style == "netburst" else r["umask"]
            u = e["umasks"].setdefault(uname, {"models": [], "rows": {}})
            if ranges is not None:
                u["models"].append(ranges)
            u["rows"][pmu] = r
    all_models = merge_ranges([tuple(x) for _, rs, _ in revs if rs for x in rs]) if revs[0][1] else None
    lines = []
    w = lines.append
    w(f"# {t['title']}: core performance events.")
    w(f"# Sources (values): {t['sources']}.")
    w("# Descriptions are ARUM's own. Generated by tools/event-tables/gen-tables.py: do not edit by hand.")
    w(HEADER_FIELDS)
    w("")
    w("[table]")
    w(f"name = {toml_str(t['file'])}")
    w(f"title = {toml_str(t['title'])}")
    w(f"vendor = {toml_str(t['vendor'])}")
    w(f"style = {toml_str(style)}")
    pmus = ", ".join(p for p, _ in t["revisions"])
    w(f'sources = {{ p = {toml_str("libpfm4 4.13 " + pmus)} }}')
    w("")
    w("[[table.match]]")
    w(f"family = 0x{t['family']:02X}")
    w(f"models = {fmt_ranges(t['models'])}")
    w("")
    w("[pmu]")
    w(f"general_counters = {t['general']}")
    w(f"counter_width = {t['width']}")
    if t.get("fixed"):
        w(f"fixed_counters = {t['fixed']}")
        w(f"fixed_width = {t['fixed_width']}")
    w("")
    w("[aliases]")
    for k, v in t["aliases"].items():
        base = v.split(":")[0]
        assert base in events, f"{t['file']}: alias {k} -> {v}: no event {base}"
        for q in v.split(":")[1:]:
            assert q in events[base]["umasks"], f"{t['file']}: alias {k} -> {v}: no unit mask {q}"
        um = events[base]["umasks"]
        has_default = any(r.get("default") for d in um.values() for r in d["rows"].values())
        if ":" not in v and um and not has_default:
            v = ":".join([base] + list(um))
        key = k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else toml_str(k)
        w(f"{key} = {toml_str(v)}")
    for name in order:
        e = events[name]
        w("")
        w("[[event]]")
        w(f"name = {toml_str(name)}")
        plain = next(iter(e["plain"].values()))
        models = merge_ranges([tuple(x) for rs in e["models"] for x in rs]) if e["models"] else None
        if models is not None and all_models is not None and models != all_models:
            w(f"models = {fmt_ranges(models)}")
        if style == "netburst":
            build_netburst_event(w, name, e, plain)
            continue
        any_row = plain if "codes" in plain else next(iter(next(iter(e["umasks"].values()))["rows"].values()))
        base = fields(style, any_row["codes"][0])
        w(f"event = 0x{base['event']:02X}")
        w(f"desc = {toml_str(DESC.get(name) or sentence(words(name)))}")
        if not e["umasks"]:
            f = base
            if f["umask"]:
                w(f"umask = 0x{f['umask']:02X}")
            for k in ("cmask", "inv", "edge"):
                if f[k]:
                    w(f"{k} = {f[k]}")
            if style == "intel" and f.get("any"):
                w("any = 1")
            if plain.get("perf_config1"):
                w(f"config1 = 0x{plain['perf_config1']:X}")
            c = counters_list(t, base["event"], f["umask"])
            if c is not None:
                w(f"counters = {c}")
            if style == "amd" and t["family"] >= 0x17 and base["event"] == 0x03:
                w("pair = true")
            continue
        defaults = [u for u, d in e["umasks"].items() if any(r.get("default") for r in d["rows"].values())]
        if defaults:
            w(f"default = {toml_str(defaults)}")
        for uname, u in e["umasks"].items():
            rows = u["rows"]
            vals = {fields(style, r["codes"][0])["umask"] for r in rows.values() if "codes" in r}
            w("[[event.mask]]")
            w(f"name = {toml_str(uname)}")
            row = next(r for r in rows.values() if "codes" in r)
            f = fields(style, row["codes"][0])
            if len(vals) > 1:
                w("all = true")
            else:
                w(f"value = 0x{f['umask']:02X}")
            if f["event"] != base["event"]:
                w(f"event = 0x{f['event']:02X}")
            for k in ("cmask", "inv", "edge"):
                if f[k]:
                    w(f"{k} = {f[k]}")
            if style == "intel" and f.get("any"):
                w("any = 1")
            if row.get("perf_config1"):
                w(f"config1 = 0x{row['perf_config1']:X}")
            um_models = merge_ranges([tuple(x) for rs in u["models"] for x in rs]) if u["models"] else None
            if um_models is not None and um_models != (models or all_models):
                w(f"models = {fmt_ranges(um_models)}")
            c = counters_list(t, f["event"], f["umask"])
            if c is not None:
                w(f"counters = {c}")
            w(f"desc = {toml_str(sentence(words(uname)))}")
    return "\n".join(lines) + "\n", len(order)


# libpfm names bit 0 of mispred_branch_retired "BOGUS"; the SDM and Linux (P4_EVENT_MISPRED_BRANCH_
# RETIRED, NBOGUS) call it NBOGUS: mispredicted branches that were not bogus. We follow the SDM.
NETBURST_RENAME = {("mispred_branch_retired", "BOGUS"): "NBOGUS"}


def build_netburst_event(w, name, e, plain):
    any_row = plain if "codes" in plain else next(iter(next(iter(e["umasks"].values()))["rows"].values()))
    escr, cccr = any_row["codes"][0], any_row["codes"][1]
    index = (any_row["perf_config"] >> 57) & 0x3F
    assert index < P4_EVENT_COUNT, name
    t0, t1, c0, c1 = P4_BIND[index]
    w(f"escr_select = 0x{(escr >> 25) & 0x3F:02X}")
    w(f"cccr_select = {(cccr >> 13) & 0x7}")
    w(f"p4_index = {index}")
    w(f"escrs = [{toml_str(t0)}, {toml_str(t1)}]")
    w(f"escr_msrs = [0x{P4_ESCR_MSR[t0]:03X}, 0x{P4_ESCR_MSR[t1]:03X}]")
    w(f"escr_counters = [{c0}, {c1}]")
    w(f"desc = {toml_str(DESC.get(name) or sentence(words(name)))}")
    defaults = [u for u, d in e["umasks"].items() if any(r.get("default") for r in d["rows"].values())]
    if defaults:
        w(f"default = {toml_str(defaults)}")
    for uname, u in e["umasks"].items():
        row = next(iter(u["rows"].values()))
        bit = row["ucode"]
        if name == "replay_event" and uname in P4_REPLAY:
            metric, pebs, vert, linux = P4_REPLAY[uname]
            w("[[event.replay]]")
            w(f"name = {toml_str(uname)}")
            w(f"pebs_enable = 0x{pebs:07X}")
            w(f"matrix_vert = 0x{vert:X}")
            w(f"perf_metric = {linux}")
            w(f"desc = {toml_str('Replay tagging: ' + metric)}")
            continue
        w("[[event.mask]]")
        w(f"name = {toml_str(uname)}")
        if name in P4_TAGGING and re.fullmatch(r"TAG[0-3]", uname):
            assert bit == 16 + int(uname[3]), (name, uname, bit)
            w(f"tag = {uname[3]}")
            w(f"desc = {toml_str(f'Tag the counted micro-ops with tag value bit {uname[3]} (execution tagging)')}")
            continue
        assert bit < 16, (name, uname, bit)
        w(f"bit = {bit}")
        w(f"desc = {toml_str(sentence(words(uname)))}")


def main():
    if not os.path.isdir(ARCH):
        sys.exit(f"gen-tables.py: no kernel event lists at {ARCH}; run tools/event-tables/regenerate.sh "
                 "(or set ARUM_LINUX_SRC to an unpacked linux-source-{KVER})")
    gmaps, topdown = kernel_generic_maps()
    report = [f"Event lists compared: Linux {KVER} tools/perf/pmu-events/arch/x86 and libpfm4 4.13, model by model.",
              "Every event name of either list is listed where the two differ; names compare without case",
              "and with ':' as '.'; 'agree' means the same name with the same encoding.", ""]
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        tool = os.path.join(tmp, "pfm-dump")
        subprocess.run(["cc", "-O", "-Wall", os.path.join(HERE, "pfm-dump.c"), "-o", tool, "-lpfm"], check=True)
        for old in os.listdir(OUT):
            if old.endswith(".toml"):
                os.remove(os.path.join(OUT, old))
        rows = read_mapfile()
        dirs = []
        for r in rows:
            if r["dir"] not in dirs:
                dirs.append(r["dir"])
        for d in dirs:
            name, text, nev, nmet = build_kernel_table(d, [r for r in rows if r["dir"] == d], gmaps, topdown, tool, report)
            with open(os.path.join(OUT, name + ".toml"), "w") as f:
                f.write(text)
            written.append(f"{name}: {nev} events, {nmet} metrics")
        for t in PFM_TABLES:
            text, nev = build_pfm(t, tool)
            with open(os.path.join(OUT, t["file"] + ".toml"), "w") as f:
                f.write(text)
            written.append(f"{t['file']}: {nev} events (libpfm4)")
        text, nmet = build_common_metrics()
        with open(os.path.join(OUT, "common.toml"), "w") as f:
            f.write(text)
        written.append(f"common: {nmet} metrics")
    comparison = "\n".join(report) + "\n"
    with open(os.path.join(HERE, "comparison.txt"), "w") as f:
        f.write(comparison)
    sys.stdout.write(comparison)
    for line in written:
        print("wrote " + line, file=sys.stderr)


if __name__ == "__main__":
    main()
