#!/usr/bin/env python3
"""Generates event-tables/*.toml from Debian's libpfm4 (the encodings) and per-family facts below.

Run (Debian 12): apt-get install libpfm4-dev; tools/event-tables/gen-tables.py
It builds pfm-dump.c, dumps each libpfm PMU (forced with LIBPFM_FORCE_PMU), and writes our own
TOML: event select, unit masks, edge/inv/cmask, counters, model ranges where revisions differ,
and short descriptions in ARUM's own words (made from the event names; hand-written for the
events behind the aliases). Zen 5 is not in libpfm 4.13: its table is maintained by hand.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "event-tables")

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
    "DTMISS": "data TLB misses", "ITMISS": "instruction TLB misses", "UC": "uncacheable", "WB": "write-back", "WT": "write-through", "WP": "write-protect",
}


def words(name):
    out = []
    for tok in re.split(r"[_.]", name):
        if not tok:
            continue
        out.append(WORDS.get(tok.upper(), tok.lower()))
    return " ".join(out)


def sentence(s):
    return s[:1].upper() + s[1:] if s else s


# ---------------------------------------------------------------------------------------------
# Per-family facts. Revisions: (libpfm PMU, model ranges it covers). Aliases: ARUM's names.
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
INTEL_MODERN_ALIASES = {
    "dcache_accesses": "MEM_INST_RETIRED:ANY",
    "dcache_misses": "L1D:REPLACEMENT",
    "L1_DTLBmiss_L2_DTLBhit": "DTLB_LOAD_MISSES:STLB_HIT",
    "L1_L2_DTLBmiss": "DTLB_LOAD_MISSES:WALK_COMPLETED",
    "cycles": "UNHALTED_CORE_CYCLES",
    "instructions": "INSTRUCTION_RETIRED",
    "branches": "BR_INST_RETIRED:ALL_BRANCHES",
    "branch_misses": "BR_MISP_RETIRED:ALL_BRANCHES",
    "llc_references": "LONGEST_LAT_CACHE:REFERENCE",
    "llc_misses": "LONGEST_LAT_CACHE:MISS",
    "dtlb_load_misses": "DTLB_LOAD_MISSES:WALK_COMPLETED",
    "icache_misses": "ICACHE_64B:IFTAG_MISS",
}
ZEN_DTLB_HIT = "L1_DTLB_MISS:" + ":".join(
    ["TLB_RELOAD_1G_L2_HIT", "TLB_RELOAD_2M_L2_HIT", "TLB_RELOAD_COALESCED_PAGE_HIT", "TLB_RELOAD_4K_L2_HIT"])
ZEN_DTLB_MISS = "L1_DTLB_MISS:" + ":".join(
    ["TLB_RELOAD_1G_L2_MISS", "TLB_RELOAD_2M_L2_MISS", "TLB_RELOAD_COALESCED_PAGE_MISS", "TLB_RELOAD_4K_L2_MISS"])
ZEN_ALIASES = {
    "dcache_accesses": "LS_DISPATCH:LD_DISPATCH:STORE_DISPATCH:LD_ST_DISPATCH",
    "L1_DTLBmiss_L2_DTLBhit": ZEN_DTLB_HIT,
    "L1_L2_DTLBmiss": ZEN_DTLB_MISS,
    "cycles": "CYCLES_NOT_IN_HALT",
    "instructions": "RETIRED_INSTRUCTIONS",
    "branches": "RETIRED_BRANCH_INSTRUCTIONS",
    "branch_misses": "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED",
    "dtlb_load_misses": ZEN_DTLB_MISS,
}

# Kernel constraint rules (arch/x86/events/intel/core.c), first match wins:
# ("fixed", config, idx) | ("event", ev, mask) | ("uevent", ev|umask<<8, mask) | ("range", lo, hi, mask)
SKL_RULES = [("fixed", 0x00C0, 0), ("fixed", 0x003C, 1), ("fixed", 0x0300, 2),
             ("uevent", 0x01C0, 0x2), ("event", 0xD0, 0xF), ("event", 0xD1, 0xF),
             ("event", 0xD2, 0xF), ("event", 0xCD, 0xF), ("event", 0xC6, 0xF)]
ICL_RULES = [("fixed", 0x00C0, 0), ("fixed", 0x01C0, 0), ("fixed", 0x0100, 0), ("fixed", 0x003C, 1),
             ("fixed", 0x0300, 2), ("fixed", 0x0400, 3), ("range", 0x03, 0x0A, 0xF),
             ("range", 0x1F, 0x28, 0xF), ("event", 0x32, 0xF), ("range", 0x48, 0x54, 0xF),
             ("range", 0x60, 0x8B, 0xF), ("uevent", 0x04A3, 0xFF), ("uevent", 0x10A3, 0xFF),
             ("uevent", 0x14A3, 0xFF), ("event", 0xA3, 0xF), ("range", 0xA8, 0xB0, 0xF),
             ("range", 0xB7, 0xBD, 0xF), ("range", 0xD0, 0xE6, 0xF), ("event", 0xEF, 0xF),
             ("range", 0xF0, 0xF4, 0xF)]
SPR_RULES = [("fixed", 0x00C0, 0), ("fixed", 0x0100, 0), ("fixed", 0x003C, 1), ("fixed", 0x0300, 2),
             ("fixed", 0x0400, 3), ("event", 0x2E, 0xFF), ("event", 0x3C, 0xFF),
             ("range", 0x01, 0x8F, 0xF), ("uevent", 0x01A3, 0xF), ("uevent", 0x02A3, 0xF),
             ("uevent", 0x08A3, 0xF), ("uevent", 0x04A4, 0x1), ("uevent", 0x08A4, 0x1),
             ("uevent", 0x02CD, 0x1), ("event", 0xCE, 0x1), ("range", 0xD0, 0xDF, 0xF),
             ("range", 0x90, 0xFE, 0xFF)]
# Intel Core 2 (SDM vol. 3B, non-architectural events of the Core microarchitecture).
CORE2_RULES = [("fixed", 0x00C0, 0), ("fixed", 0x003C, 1), ("fixed", 0x0300, 2),
               *[("event", e, 0x1) for e in (0xCB, 0x10, 0x14, 0x18, 0xA1)],
               *[("event", e, 0x2) for e in (0x11, 0x12, 0x13, 0x19)]]

TABLES = [
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
    dict(file="intel-core2", title="Intel Core microarchitecture (Core 2, Xeon 5100/5300/5400/7400)", style="intel",
         vendor="GenuineIntel", family=6, models=mr((0x0F, 0x0F), (0x16, 0x17), (0x1D, 0x1D)),
         revisions=[("core", None)], general=2, width=40, fixed=3, fixed_width=40, rules=CORE2_RULES,
         aliases={"dcache_accesses": "L1D_ALL_REF", "dcache_misses": "L1D_REPL",
                  "L1_L2_DTLBmiss": "DTLB_MISSES:ANY", "cycles": "UNHALTED_CORE_CYCLES",
                  "instructions": "INSTRUCTIONS_RETIRED", "branches": "BR_INST_RETIRED:ANY",
                  "branch_misses": "BR_INST_RETIRED_MISPRED",
                  "llc_references": "LAST_LEVEL_CACHE_REFERENCES",
                  "llc_misses": "LAST_LEVEL_CACHE_MISSES", "dtlb_load_misses": "DTLB_MISSES:MISS_LD",
                  "icache_misses": "L1I_MISSES"},
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
         sources="Intel SDM vol. 3B, NetBurst performance monitoring; ESCR/CCCR values via libpfm4 netburst_p; counter binding and P4 event index as in Linux arch/x86/events/intel/p4.c"),
    dict(file="intel-skx", title="Intel Skylake-SP, Cascade Lake, Cooper Lake (Xeon Scalable 1st-3rd gen.)", style="intel",
         vendor="GenuineIntel", family=6, models=mr((0x55, 0x55)), revisions=[("skx", None)],
         general=4, width=48, fixed=3, fixed_width=48, rules=SKL_RULES,
         aliases=dict(INTEL_MODERN_ALIASES, L1_L2_DTLBmiss="DTLB_LOAD_MISSES:MISS_CAUSES_A_WALK"),
         sources="Intel perfmon SKX/CLX core event lists; values via libpfm4 skx; constraints as in Linux intel_skl_event_constraints"),
    dict(file="intel-icx", title="Intel Ice Lake-SP (Xeon Scalable 3rd gen.)", style="intel",
         vendor="GenuineIntel", family=6, models=mr((0x6A, 0x6A), (0x6C, 0x6C)), revisions=[("icx", None)],
         general=8, width=48, fixed=4, fixed_width=48, rules=ICL_RULES,
         aliases=dict(INTEL_MODERN_ALIASES, llc_references="LONGEST_LAT_CACHE:REFERENCES"),
         sources="Intel perfmon ICX core event list; values via libpfm4 icx; constraints as in Linux intel_icl_event_constraints"),
    dict(file="intel-spr", title="Intel Sapphire Rapids and Emerald Rapids (Xeon Scalable 4th/5th gen.)", style="intel",
         vendor="GenuineIntel", family=6, models=mr((0x8F, 0x8F), (0xCF, 0xCF)), revisions=[("spr", None)],
         general=8, width=48, fixed=4, fixed_width=48, rules=SPR_RULES,
         aliases={k: v for k, v in INTEL_MODERN_ALIASES.items() if k != "icache_misses"},
         sources="Intel perfmon SPR core event list (Emerald Rapids uses the same Raptor Cove core events); values via libpfm4 spr; constraints as in Linux intel_spr_event_constraints"),
    dict(file="amd-zen1", title="AMD Zen (family 17h, models 00h-2Fh)", style="amd", vendor="AuthenticAMD",
         family=0x17, models=mr((0x00, 0x2F)), revisions=[("amd64_fam17h_zen1", None)], general=6, width=48,
         # Zen 1 has no demand-fill event in this list: data cache misses are counted, as Linux
         # does for L1-dcache-load-misses, as the L2 requests that data cache misses make.
         aliases=dict(ZEN_ALIASES, dcache_accesses="DATA_CACHE_ACCESSES",
                      dcache_misses="REQUESTS_TO_L2_GROUP1:RD_BLK_L:RD_BLK_X:CHANGE_TO_X",
                      icache_misses="REQUESTS_TO_L2_GROUP1:CACHEABLE_IC_READ"),
         sources="AMD PPR for family 17h models 00h-0Fh (54945); values via libpfm4 amd64_fam17h_zen1"),
    dict(file="amd-zen2", title="AMD Zen 2 (family 17h, models 30h-FFh)", style="amd", vendor="AuthenticAMD",
         family=0x17, models=mr((0x30, 0xFF)), revisions=[("amd64_fam17h_zen2", None)], general=6, width=48,
         aliases=dict(ZEN_ALIASES, dcache_misses="DATA_CACHE_REFILLS_FROM_SYSTEM",
                      icache_misses="REQUESTS_TO_L2_GROUP1:CACHEABLE_IC_READ"),
         sources="AMD PPR for family 17h model 31h (55803); values via libpfm4 amd64_fam17h_zen2"),
    dict(file="amd-zen3", title="AMD Zen 3 (family 19h, models 00h-0Fh, 20h-5Fh)", style="amd", vendor="AuthenticAMD",
         family=0x19, models=mr((0x00, 0x0F), (0x20, 0x5F)), revisions=[("amd64_fam19h_zen3", None)], general=6, width=48,
         aliases=dict(ZEN_ALIASES, dcache_misses="DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM",
                      icache_misses="IC_TAG_HIT_MISS:IC_MISS"),
         sources="AMD PPR for family 19h model 01h (55898); values via libpfm4 amd64_fam19h_zen3"),
    dict(file="amd-zen4", title="AMD Zen 4 (family 19h, models 10h-1Fh, 60h-AFh)", style="amd", vendor="AuthenticAMD",
         family=0x19, models=mr((0x10, 0x1F), (0x60, 0xAF)), revisions=[("amd64_fam19h_zen4", None)], general=6, width=48,
         aliases=dict(ZEN_ALIASES, dcache_misses="DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM",
                      icache_misses="IC_TAG_HIT_MISS:IC_MISS"),
         sources="AMD PPR for family 19h model 11h (55901); values via libpfm4 amd64_fam19h_zen4"),
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
    "BR_MISP_RETIRED": "Retired branch instructions that were mispredicted",
    "LAST_LEVEL_CACHE_REFERENCES": "Requests that reach the last-level cache (architectural event)",
    "LAST_LEVEL_CACHE_MISSES": "Last-level cache requests that miss (architectural event)",
    "LONGEST_LAT_CACHE": "Requests to the last-level cache",
    "L1I_MISSES": "Instruction fetches that miss the L1 instruction cache",
    "MEM_INST_RETIRED": "Retired load and store instructions",
    "L1D": "L1 data cache activity",
    "DTLB_LOAD_MISSES": "Loads that miss the first-level data TLB",
    "ICACHE_64B": "Instruction cache fetches in 64-byte lines",
    "CYCLES_NOT_IN_HALT": "Core cycles while not halted",
    "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED": "Retired branch instructions that were mispredicted",
    "LS_DISPATCH": "Load and store operations dispatched to the load-store unit",
    "L1_DTLB_MISS": "L1 data TLB misses, by where the translation was found",
    "DATA_CACHE_REFILLS_FROM_SYSTEM": "Demand L1 data cache fills from beyond the L1 (data cache misses)",
    "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM": "Demand L1 data cache fills, by data source (data cache misses)",
    "REQUESTS_TO_L2_GROUP1": "Requests to the L2 cache, group 1 request types",
    "IC_TAG_HIT_MISS": "Instruction cache tag lookups, hits and misses",
    "global_power_events": "Time during which the processor is not stopped",
    "instr_retired": "Instructions retired, by bogus/non-bogus and tagging",
    "retired_branch_type": "Retired branches, by type",
    "mispred_branch_retired": "Mispredicted retired branches",
    "BSQ_cache_reference": "L2/L3 cache references seen by the bus sequence queue",
    "page_walk_type": "Page walks by the page miss handler (data or instruction TLB miss)",
    "BPU_fetch_request": "Instruction fetch requests from the branch prediction unit",
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
C01, C23, C45, C67, C89, C1011 = [0], [2], [4, 5], [6, 7], [8, 9], [10, 11]
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


# ---------------------------------------------------------------------------------------------
def dump(pmu, tool):
    env = dict(os.environ, LIBPFM_FORCE_PMU=pmu)
    out = subprocess.run([tool, pmu], env=env, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def fields(style, raw):
    """Splits libpfm's control-register value into the table's fields."""
    f = {"event": raw & 0xFF, "umask": (raw >> 8) & 0xFF, "edge": (raw >> 18) & 1,
         "inv": (raw >> 23) & 1, "cmask": (raw >> 24) & 0xFF}
    if style == "amd":
        f["event"] |= ((raw >> 32) & 0xF) << 8
    else:
        f["any"] = (raw >> 21) & 1
    return f


def counters_for(rules, general, fixed, ev, um):
    """GP counters (0..) and fixed counters (32+i) that may hold event ev with unit mask um."""
    cfg = ev | (um << 8)
    for r in rules or []:
        kind = r[0]
        if kind == "fixed" and r[1] == cfg:
            gp = [] if ev == 0 else [i for i in range(general)]  # event 0 is a fixed-only pseudo code
            return gp + [32 + r[2]]
        if (kind == "event" and r[1] == ev) or (kind == "uevent" and r[1] == cfg) or \
                (kind == "range" and r[1] <= ev <= r[2]):
            # Kept even when it spans the table's counters: Skylake-SP has 8 without HT.
            if r[-1] & 0xFF == 0xFF:
                return None
            return [i for i in range(8) if r[-1] >> i & 1]
    return None  # any general counter


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


def build(t, tool):
    style = t["style"]
    revs = [(pmu, ranges, dump(pmu, tool)) for pmu, ranges in t["revisions"]]
    # Gather events and unit masks across revisions: name -> {models, raw, umasks{...}}.
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
    w("# Descriptions are ARUM's own. Generated by tools/event-tables/gen-tables.py; edit by hand if needed.")
    w("# Fields: `event` select and `umask`/`cmask`/`inv`/`edge`; `counters` lists the counters that may hold")
    w("# the event (general 0.., fixed 32+i; absent: any general counter); `models` limits an event or mask to")
    w("# some models; a mask with `all = true` is every other mask the model has. NetBurst events give the")
    w("# ESCR event select, the two ESCRs (and their MSRs) they may use with the counters each ESCR feeds")
    w("# (counter n is paired with CCCR n), the CCCR's ESCR select, the kernel's P4 event index, mask `bit`s.")
    w("")
    w("[table]")
    w(f"name = {toml_str(t['file'])}")
    w(f"title = {toml_str(t['title'])}")
    w(f"vendor = {toml_str(t['vendor'])}")
    w(f"style = {toml_str(style)}")
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
            # The event needs a unit mask and has no default: the alias names all of them.
            v = ":".join([base] + list(um))
        w(f"{k} = {toml_str(v)}")
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
        # The event's own fields come from its default encoding, or from any unit mask's encoding.
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
            c = counters_for(t.get("rules"), t["general"], t.get("fixed", 0), base["event"], f["umask"])
            if c is not None:
                w(f"counters = {c}")
            if style == "amd" and t["family"] >= 0x17 and base["event"] == 0x03:
                w("pair = true")
            continue
        # Default unit mask(s) when the event is named alone.
        defaults = [u for u, d in e["umasks"].items() if any(r.get("default") for r in d["rows"].values())]
        if defaults:
            w(f"default = {toml_str(defaults)}")
        if style == "amd" and t["family"] >= 0x17 and base["event"] == 0x03:
            w("pair = true")
        for uname, u in e["umasks"].items():
            rows = u["rows"]
            vals = {fields(style, r["codes"][0])["umask"] for r in rows.values() if "codes" in r}
            w("[[event.mask]]")
            w(f"name = {toml_str(uname)}")
            row = next(r for r in rows.values() if "codes" in r)
            f = fields(style, row["codes"][0])
            if len(vals) > 1:
                # An "all of them" mask whose value grew with later revisions: computed per model.
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
            c = counters_for(t.get("rules"), t["general"], t.get("fixed", 0), f["event"], f["umask"])
            if c is not None:
                w(f"counters = {c}")
            w(f"desc = {toml_str(sentence(words(uname)))}")
    return "\n".join(lines) + "\n"


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
        w("[[event.mask]]")
        w(f"name = {toml_str(uname)}")
        w(f"bit = {row['ucode']}")
        w(f"desc = {toml_str(sentence(words(uname)))}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        tool = os.path.join(tmp, "pfm-dump")
        subprocess.run(["cc", "-O", "-Wall", os.path.join(HERE, "pfm-dump.c"), "-o", tool, "-lpfm"],
                       check=True)
        for t in TABLES:
            text = build(t, tool)
            path = os.path.join(OUT, t["file"] + ".toml")
            with open(path, "w") as f:
                f.write(text)
            print(f"wrote {os.path.relpath(path)} ({text.count('[[event]]')} events)", file=sys.stderr)


if __name__ == "__main__":
    main()
