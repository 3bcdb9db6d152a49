#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the guest logs of `make bench` into tests/bench/results/.

    report.py --out tests/bench/results --readme tests/bench/README.md \
        [--meta TEXT] KERNEL=ICOUNT_LOG[,OTHER_LOG...] ...

Writes <out>/<kernel>.md per kernel, <out>/chart.png, <out>/summary.json
and the block between the results markers of the README. Each log holds the
tab-separated lines of tests/bench/ue_bench.c (ROW, SCALE, CHUNK, MEM, SLAB,
PROF, INFO); a missing log leaves its sections out.
"""
import argparse
import json
import os
import re
import sys

ROWS = [
    # key, label
    ("loop", "empty loop (the loop overhead)"),
    ("getppid", "getppid()"),
    ("devnull", "16-byte write() to /dev/null"),
    ("devnull_writev", "writev(4 + 16 bytes) to /dev/null"),
    ("marker", "16-byte write() to trace_marker, tracing on"),
    ("uprobe", "uprobe hit on a function of the bench binary (uprobe event enabled)"),
    ("ue_s_write_ft", "user_events write(), 16-byte char[16], status page ABI, ftrace"),
    ("ue_s_writev_ft", "user_events writev(index, payload), status page ABI, ftrace"),
    ("ue_r_write_ft", "user_events write(), remote-write ABI, ftrace"),
    ("ue_r_writev_ft", "user_events writev(index, payload), remote-write ABI, ftrace"),
    ("ue_s_write_perf", "user_events write(), status page ABI, perf (per-task, mmap ring)"),
    ("ue_s_writev_perf", "user_events writev(), status page ABI, perf"),
    ("ue_r_write_perf", "user_events write(), remote-write ABI, perf"),
    ("ue_r_writev_perf", "user_events writev(), remote-write ABI, perf"),
    ("ue_s_writev_ft_mt", "user_events writev(), status page ABI, ftrace, from a 2-thread process"),
    ("devnull_mt", "16-byte write() to /dev/null from a 2-thread process"),
    ("devnull_writev_mt", "writev(4 + 16 bytes) to /dev/null from a 2-thread process"),
    ("getppid_perf", "getppid() with perf attached to syscalls:sys_enter_getppid (perf anchor: a kernel tracepoint)"),
    ("ue_5f_writev_ft", "5-field event (u64, u32, u32, char[16], __rel_loc char[] of 32 B), writev, ftrace"),
    ("ue_noprobe_write", "user_events write(), no probe attached (EBADF)"),
    ("devnull_writev3", "writev() of 3 segments (4 + 8 + 8 bytes) to /dev/null"),
    ("ue_s_writev3_ft", "user_events writev(), 3 segments (index, 8, 8), status page ABI, ftrace"),
    ("devnull_writev4", "writev() of 4 segments (4 + 4 + 4 + 8 bytes) to /dev/null"),
    ("ue_s_writev4_ft", "user_events writev(), 4 segments (index, 4, 4, 8), status page ABI, ftrace"),
    ("devnull_writev6", "writev() of 6 segments (4 + 4 + 4 + 4 + 2 + 2 bytes) to /dev/null"),
    ("ue_s_writev6_ft", "user_events writev(), 6 segments (index, 4, 4, 4, 2, 2), status page ABI, ftrace"),
    ("devnull_eh_small_writev", "EventHeader small event (index, header 8, metadata 13, int32): writev() to /dev/null"),
    ("devnull_eh_small_write", "EventHeader small event: write() of the same 29 bytes to /dev/null"),
    ("ue_eh_small_writev_ft", "EventHeader small event: user_events writev(), 4 segments, ftrace"),
    ("ue_eh_small_write_ft", "EventHeader small event: user_events write() of the same 29 bytes, ftrace"),
    ("marker_eh_small", "EventHeader small event: its 25-byte payload written to trace_marker"),
    ("devnull_eh_sa_writev", "EventHeader string + array (index, header 8, metadata 17, string 12, count 2, int32[4]): writev() to /dev/null"),
    ("devnull_eh_sa_write", "EventHeader string + array: write() of the same 59 bytes to /dev/null"),
    ("ue_eh_sa_writev_ft", "EventHeader string + array: user_events writev(), 6 segments, ftrace"),
    ("ue_eh_sa_write_ft", "EventHeader string + array: user_events write() of the same 59 bytes, ftrace"),
    ("marker_eh_sa", "EventHeader string + array: its 55-byte payload written to trace_marker"),
    ("check_byte", "user-side disabled check: status page byte + branch"),
    ("check_word", "user-side disabled check: enable word bit + branch"),
]
REG_LEVELS = [1, 1000, 32000]
OWN_LEVELS = [1, 1000, 8000]
REG_ABIS = [("s", "status page ABI"), ("r", "remote-write ABI")]

CHART_ROWS = ["getppid", "devnull", "devnull_writev", "marker", "uprobe",
              "ue_s_write_ft", "ue_s_writev_ft", "ue_r_writev_ft",
              "ue_s_writev_perf", "ue_r_writev_perf", "ue_5f_writev_ft",
              "ue_noprobe_write"]
CHART_SHORT = {
    "getppid": "getppid", "devnull": "write /dev/null",
    "devnull_writev": "writev /dev/null", "marker": "trace_marker",
    "uprobe": "uprobe hit", "ue_s_write_ft": "UE write ftrace",
    "ue_s_writev_ft": "UE writev ftrace (status)",
    "ue_r_writev_ft": "UE writev ftrace (remote)",
    "ue_s_writev_perf": "UE writev perf (status)",
    "ue_r_writev_perf": "UE writev perf (remote)",
    "ue_5f_writev_ft": "UE 5-field writev ftrace",
    "ue_noprobe_write": "UE write, no probe",
}


def parse(path):
    d = {"rows": {}, "scale": {}, "scaler": {}, "scalec": {}, "chunks": {}, "mem": {}, "slab": {},
         "prof": {}, "graph": {}, "kmod": {}, "info": [], "present": False}
    if not path or not os.path.exists(path):
        return d
    d["present"] = True
    with open(path, errors="replace") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            kind = p[0]
            try:
                if kind == "ROW" and len(p) >= 4:
                    d["rows"][p[1]] = {
                        "min": float(p[2]),
                        "reps": [float(x) for x in p[3].split(",") if x],
                        "note": p[4] if len(p) > 4 else ""}
                elif kind == "SCALE":
                    d["scale"].setdefault(p[1], {})[int(p[2])] = {
                        "best": float(p[3]), "all": p[4] if len(p) > 4 else "",
                        "vcsw": float(p[5]) if len(p) > 5 else None}
                elif kind == "SCALER" and len(p) >= 7:
                    # SCALER kind median low high all median/getppid's
                    d["scaler"][p[1]] = {"median": float(p[2]), "lo": float(p[3]),
                                         "hi": float(p[4]), "all": p[5], "norm": float(p[6])}
                elif kind == "SCALEC" and len(p) >= 6:
                    # SCALEC kind median low high all: 2 x ops per host CPU
                    # second with 2 writers / with 1
                    d["scalec"][p[1]] = {"median": float(p[2]), "lo": float(p[3]),
                                         "hi": float(p[4]), "all": p[5]}
                elif kind == "CHUNK":
                    d["chunks"].setdefault(p[1], []).append(
                        (int(p[2]), int(p[3]), float(p[4])))
                elif kind == "MEM":
                    d["mem"].setdefault(p[1], {"units": int(p[2])})[p[3]] = float(p[4])
                elif kind == "SLAB":
                    d["slab"].setdefault(p[1], []).append((p[3], float(p[4])))
                elif kind == "PROF" and len(p) >= 7:
                    # PROF filter row function calls ns ops
                    filt, row, fn = p[1], p[2], p[3]
                    calls, ns, ops = int(p[4]), float(p[5]), int(p[6])
                    if fn == filt and ops:
                        d["prof"].setdefault(filt, {})[row] = (calls / ops, ns / ops)
                elif kind == "KMOD" and len(p) >= 3:
                    d["kmod"][p[1]] = (float(p[2]), p[3] if len(p) > 3 else "")
                elif kind == "GRAPH" and len(p) >= 3:
                    d["graph"].setdefault(p[1], []).append("\t".join(p[2:]))
                elif kind == "INFO":
                    d["info"].append("\t".join(p[1:]))
            except (ValueError, IndexError):
                continue
    return d


def fmt(v, nd=0):
    if v is None:
        return "n/a"
    return f"{v:,.{nd}f}"


def net(d, key):
    """Per-op figure minus the empty-loop overhead."""
    r = d["rows"].get(key)
    if not r:
        return None
    loop = d["rows"].get("loop", {}).get("min", 0.0)
    return r["min"] - loop


def own_fit(ic):
    """Linear fit of the one-process registration cost: (first, slope, cost at 32000, points)."""
    pts = [(lvl, net(ic, f"reg_own_{lvl}")) for lvl in OWN_LEVELS]
    pts = [(lvl, v) for lvl, v in pts if v is not None]
    if len(pts) < 2:
        return None
    n = len(pts)
    mx = sum(x for x, _ in pts) / n
    my = sum(y for _, y in pts) / n
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    slope = sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else 0.0
    first = pts[0][1]
    return first, slope, my + slope * (32000 - mx), pts


def scale_ratio(tc, key):
    """Median of the paired 2/1 ratios (SCALER), or the ratio of the best rates (old logs)."""
    if key in tc["scaler"]:
        return tc["scaler"][key]["median"]
    s = tc["scale"].get(key, {})
    if 1 in s and 2 in s and s[1]["best"] > 0:
        return s[2]["best"] / s[1]["best"]
    return None


def targets(ic, tc):
    """[(name, status, detail)] for the README targets."""
    out = []

    def add(name, ok, detail):
        if isinstance(ok, str):
            status = ok
        else:
            status = "n/a" if ok is None else ("met" if ok else "missed")
        out.append((name, status, detail))

    # Own work: the cost of a row minus the same system call to /dev/null
    # (syscall entry, VFS, iovec import: nothing the module can change)
    dn, dv, mk = net(ic, "devnull"), net(ic, "devnull_writev"), net(ic, "marker")
    m = None if None in (dn, mk) else mk - dn
    for call, base, bname in (("write", dn, "write()"), ("writev", dv, "writev()")):
        for abi, aname in (("s", "status page"), ("r", "remote-write")):
            key = f"ue_{abi}_{call}_ft"
            u = net(ic, key)
            what = (f"enabled {bname} of a 16-byte event, ftrace ({aname} ABI): own work "
                    f"<= 0.85 x trace_marker's own work")
            if None in (u, base, m):
                add(what, None, "not measured")
                continue
            add(what, u - base <= 0.85 * m,
                f"({fmt(u)} - {fmt(base)}) / ({fmt(mk)} - {fmt(dn)}) = {fmt(u - base)} / {fmt(m)} "
                f"= **{(u - base) / m:.2f}** (budget {fmt(0.85 * m)})")
    u5 = net(ic, "ue_5f_writev_ft")
    if None not in (u5, dv, m):
        add("5-field event with a __rel_loc string, writev, ftrace: own work / trace_marker's",
            "reported", f"({fmt(u5)} - {fmt(dv)}) / {fmt(m)} = **{(u5 - dv) / m:.2f}**")
    # Issue 31: writev() as cheap as write(); more segments cost their bytes
    for n in ("", "3", "4", "6"):
        u, b = net(ic, f"ue_s_writev{n}_ft"), net(ic, f"devnull_writev{n or ''}")
        if None in (u, b, m):
            continue
        add(f"writev() of the 16-byte event in {n or '2'} segments, ftrace: own work / trace_marker's "
            f"(issue 31: <= 1.00; write(): {(net(ic, 'ue_s_write_ft') - dn) / m:.2f})",
            "reported", f"({fmt(u)} - {fmt(b)}) / {fmt(m)} = **{(u - b) / m:.2f}**")
    for sk, what in (("eh_small", "EventHeader small event (4 segments)"),
                     ("eh_sa", "EventHeader string + array (6 segments)")):
        uv, uw = net(ic, f"ue_{sk}_writev_ft"), net(ic, f"ue_{sk}_write_ft")
        bv, bw = net(ic, f"devnull_{sk}_writev"), net(ic, f"devnull_{sk}_write")
        mk2 = net(ic, f"marker_{sk}")
        if None in (uv, uw, bv, bw, mk2):
            continue
        m2 = mk2 - bw
        add(f"{what}: own work of writev() and of write() of the same bytes / trace_marker's of its payload",
            "reported", f"writev ({fmt(uv)} - {fmt(bv)}) / {fmt(m2)} = **{(uv - bv) / m2:.2f}**; "
            f"write ({fmt(uw)} - {fmt(bw)}) / {fmt(m2)} = **{(uw - bw) / m2:.2f}**; "
            f"writev - write own work: {fmt((uv - bv) - (uw - bw))}")
    gp, g = net(ic, "getppid_perf"), net(ic, "getppid")
    for abi, aname in (("s", "status page"), ("r", "remote-write")):
        up = net(ic, f"ue_{abi}_write_perf")
        if None in (gp, g, up, dn):
            continue
        add(f"perf delivery, write() ({aname} ABI), beside a kernel tracepoint's", "reported",
            f"user event own work {fmt(up)} - {fmt(dn)} = {fmt(up - dn)}; sys_enter_getppid with "
            f"the same perf event: {fmt(gp)} - {fmt(g)} = {fmt(gp - g)} "
            f"({(up - dn) / (gp - g):.2f} x)")
    n, dn = net(ic, "ue_noprobe_write"), net(ic, "devnull")
    if None in (n, dn):
        add("no-probe write <= 1.1 x /dev/null write", None, "not measured")
    else:
        add("no-probe write <= 1.1 x /dev/null write", n <= 1.1 * dn,
            f"{fmt(n)} vs 1.1 x {fmt(dn)} = {fmt(1.1 * dn)} ({n / dn:.2f} x)")
    for abi, name in REG_ABIS:
        a, b = net(ic, f"reg_{abi}_1"), net(ic, f"reg_{abi}_32000")
        what = f"32000th registration <= 1.2 x first ({name}, new event, the others made by other processes)"
        if None in (a, b):
            add(what, None, "not measured")
        else:
            add(what, b <= 1.2 * a, f"{fmt(b)} at 32000 events vs {fmt(a)} at 1 ({b / a:.2f} x)")
    own = own_fit(ic)
    if own:
        a, slope, pred, pts = own
        ch = tc["chunks"].get("regtime", [])
        full = [c for c in ch if c[1] == 1000]
        wall = ""
        if len(full) >= 2 and full[0][2] > 0:
            wall = (f"; wall clock (plain TCG), one process registering 32000: last 1000 took "
                    f"{full[-1][2] / full[0][2]:.1f} x the first 1000")
        add("32000th registration <= 1.2 x first (one process registering them all on one file, remote-write ABI)",
            pred <= 1.2 * a,
            ", ".join(f"{fmt(v)} at {lvl}" for lvl, v in pts) +
            f": {slope:.1f} more instructions per registration already held; "
            f"32000th extrapolated: {fmt(pred)} ({pred / a:.1f} x){wall}")
    ratio, own, ctl = (scale_ratio(tc, k) for k in ("ue_writev_ft", "ue_writev_ft_ownfd", "getppid"))
    sr, sc = tc["scaler"], tc["scalec"]

    def spread(key, r):
        x = sr.get(key)
        if not x:
            return f"{r:.2f} x"
        return (f"{r:.2f} x (median of {len(x['all'].split(','))} paired runs, "
                f"{x['lo']:.2f}-{x['hi']:.2f}; / getppid()'s ratio of the same run: {x['norm']:.2f})")
    for key, what in (("ue_writev_ft", "threads sharing one file"),
                      ("ue_writev_ft_ownfd", "each thread its own file")):
        r = ratio if key == "ue_writev_ft" else own
        name = f"2 writers >= 1.7 x one (writev, ftrace, multi-threaded TCG -smp 2, {what})"
        if r is None:
            add(name, None, "not measured")
            continue
        c, cc = sc.get(key), sc.get("getppid")
        vc = tc["scale"].get(key, {}).get(2, {}).get("vcsw")
        sleeps = f"; 2 writers sleep {vc:.2f} times per 1000 writes" if vc is not None else ""
        if c:
            # Judged per host CPU second: what the guest would get if the
            # host gave each busy vCPU a core
            detail = (f"**{c['median']:.2f} x** per host CPU second (2 x ops per CPU s of QEMU with 2 "
                      f"writers / with 1; median of {len(c['all'].split(','))} paired runs, "
                      f"{c['lo']:.2f}-{c['hi']:.2f})")
            if cc:
                detail += (f"; getppid() control the same way: {cc['median']:.2f} x "
                           f"({cc['lo']:.2f}-{cc['hi']:.2f})")
            detail += f"; wall-clock ratio {spread(key, r)}{sleeps}"
            if ctl is not None:
                detail += f"; wall-clock getppid() control {ctl:.2f} x"
            add(name, c["median"] >= 1.7, detail)
            continue
        detail = spread(key, r) + sleeps
        if ctl is not None:
            detail += "; getppid() control: " + spread("getppid", ctl)
        if ctl is not None and ctl < 1.8:
            add(name, None, detail + " (inconclusive: the host did not give the guest 2 CPUs' worth)")
        else:
            add(name, r >= 1.7, detail)
    ev = tc["mem"].get("event")
    if ev:
        slab = ev.get("Slab", 0) + ev.get("Percpu", 0)
        vfs = sum(v for n, v in tc["slab"].get("event", [])
                  if n in ("inode_cache", "dentry", "lsm_inode_cache", "tracefs_inode_cache"))
        vfs_txt = f"; of which tracefs inodes and dentries {fmt(vfs)} B" if vfs > 256 else ""
        add("memory per event < 2 KiB (Slab + Percpu of /proc/meminfo)", slab < 2048,
            f"{fmt(slab)} B (live slab objects {fmt(ev.get('SlabObjects'))} B{vfs_txt}; MemFree "
            f"{fmt(ev.get('MemFree'))} B; {ev['units']} events, registering process gone)")
    else:
        add("memory per event < 2 KiB", None, "not measured")
    return out


def prof_table(ic):
    prof = ic["prof"]
    if not prof:
        return []
    cal = prof.get("bpf_lsm_file_permission", {})
    raw = [ns / calls for calls, ns in cal.values() if calls]
    h = (min(raw) - 3) if raw else 0.0
    rows = ["getppid", "devnull", "devnull_writev", "marker", "write", "writev",
            "writev_perf", "writev_5f", "noprobe"]
    lines = ["",
             "### Where the instructions go (function_graph, one function at a time)",
             "",
             "Inclusive instructions per operation of each function (calls per op in",
             "parentheses), from a function_graph trace of 5 operations with only that",
             f"function patched. The tracer's own cost, {fmt(h)} instructions per call",
             "(measured on the empty LSM stub bpf_lsm_file_permission, minus 3), is",
             "subtracted. Rows: write/writev = user_events with ftrace enabled,",
             "writev_perf = perf attached instead, noprobe = write() with nothing attached.",
             "",
             "| function | " + " | ".join(rows) + " |",
             "| --- | " + " | ".join("---:" for _ in rows) + " |"]
    for fn, per in prof.items():
        if fn == "bpf_lsm_file_permission":
            continue
        cells = []
        for r in rows:
            if r in per and per[r][0] > 0:
                calls, ns = per[r]
                v = ns - calls * h
                cells.append(f"{fmt(v)} ({calls:g})")
            else:
                cells.append("")
        if any(cells):
            lines.append(f"| {fn} | " + " | ".join(cells) + " |")
    return lines


def kmod_table(ic):
    """The tracing core's calls (tests/bench/kmod), and the write rows split with them."""
    km = ic["kmod"]
    if "ev_reserve_commit" not in km:
        return []
    k = {n: v for n, (v, _) in km.items()}
    lines = ["",
             "### Where the instructions go: the tracing core's calls",
             "",
             "kernel/trace/ is not traceable, so tests/bench/kmod/ue_bench_kmod.c calls these",
             "functions itself in the -icount guest, each between two RDTSC (which",
             "read the instruction count there), on an enabled user event with no",
             "filter or trigger, and keeps the minimum over 3000 calls, minus an",
             "empty bracket: each call's path length, warm.",
             "",
             "| call | instructions | what |", "| --- | ---: | --- |"]
    for n, (v, desc) in km.items():
        if n != "empty":
            lines.append(f"| {n} | {fmt(v)} | {desc} |")
    dn, dv, mk = net(ic, "devnull"), net(ic, "devnull_writev"), net(ic, "marker")
    w, wv = net(ic, "ue_s_write_ft"), net(ic, "ue_s_writev_ft")
    if None in (dn, dv, mk, w, wv):
        return lines
    api, rb = k["ev_reserve_commit"], k["rb_reserve_commit"]
    cp, nof = k["copy_raw"], k["copy_nofault"]
    lines += ["",
              "Own work (a row minus the same system call to /dev/null) split with these:",
              "",
              "| part | user_events write() | user_events writev() | trace_marker write() |",
              "| --- | ---: | ---: | ---: |",
              f"| own work | {fmt(w - dn)} | {fmt(wv - dv)} | {fmt(mk - dn)} |",
              f"| record reserve + commit | {fmt(api)} (event API) | {fmt(api)} (event API) "
              f"| {fmt(rb)} (ring buffer) |",
              f"| payload copy (16 bytes) | {fmt(cp)} (raw) | {fmt(cp)} (raw) "
              f"| {fmt(nof)} (copy_from_user_nofault) |",
              f"| the rest: the file operation's own code | {fmt(w - dn - api - cp)} "
              f"| {fmt(wv - dv - api - cp)} | {fmt(mk - dn - rb - nof)} |",
              "",
              f"The event API costs {fmt(api - rb)} more than the bare ring buffer calls "
              "trace_marker makes (see tests/bench/README.md, \"The event API against "
              "trace_marker\")."]
    return lines


def kernel_md(rel, ic, tc, meta):
    L = [f"# user_events.ko benchmark: {rel}", ""]
    if meta:
        L += [meta, ""]
    L += ["Path lengths under QEMU `-icount shift=0,sleep=off -smp 1`: one guest ns",
          "is one guest instruction. Each figure is per operation over 100,000",
          "operations (registration: per operation over a batch of new events), the",
          "minimum of 5 repeats after discarded warm-up repeats, in one boot.",
          "'minus loop' subtracts the empty-loop row. Notes say when the 5 repeats",
          "disagree by more than 2%.", ""]
    if ic["rows"]:
        L += ["| row | instructions per op (min of 5) | minus loop overhead | notes | repeats |",
              "| --- | ---: | ---: | --- | --- |"]
        for key, label in ROWS:
            r = ic["rows"].get(key)
            if not r:
                continue
            L.append(f"| {label} | {fmt(r['min'], 1)} | {fmt(net(ic, key), 1)} | "
                     f"{r['note']} | {', '.join(fmt(x, 1) for x in r['reps'])} |")
        for level in REG_LEVELS:
            for abi, name in REG_ABIS:
                key = f"reg_{abi}_{level}"
                r = ic["rows"].get(key)
                if not r:
                    continue
                exist = "1 event exists" if level == 1 else f"{level} events exist"
                L.append(f"| DIAG_IOCSREG of a new event, {name}, {exist} | "
                         f"{fmt(r['min'])} | {fmt(net(ic, key))} | {r['note']} | "
                         f"{', '.join(fmt(x) for x in r['reps'])} |")
        for level in OWN_LEVELS:
            key = f"reg_own_{level}"
            r = ic["rows"].get(key)
            if not r:
                continue
            L.append(f"| DIAG_IOCSREG of a new event, remote-write ABI, by a process that registered {level} | "
                     f"{fmt(r['min'])} | {fmt(net(ic, key))} | {r['note']} | "
                     f"{', '.join(fmt(x) for x in r['reps'])} |")
    else:
        L += ["(no icount results)"]

    L += ["", "## Wall clock under plain TCG, -smp 2 (ratios only)", "",
          "Plain TCG timings vary by up to 2x between boots and with the host's load;",
          "only ratios within one boot mean something. Writers: multi-threaded TCG",
          "(one host thread per vCPU); registration and memory: single-threaded TCG.", ""]
    if tc["scale"]:
        L += ["Each repeat runs every row with 1 and 2 writers back to back (order",
              "alternating between repeats); the ratio is taken within each such pair,",
              "and the median over the repeats is shown with its range, and divided by",
              "the getppid() ratio of the same repeat (what the host gave the two vCPUs",
              "then). Rates: medians.", "",
              "Per host CPU second: the guest reads the host's /proc/<pid>/stat of its",
              "QEMU process (the host root is shared over 9p) before and after each run;",
              "2 x (ops per CPU second of QEMU with 2 writers) / (the same with 1) is",
              "the ratio the guest would get if the host gave each busy vCPU a core. A",
              "vCPU spinning on a lock burns host CPU, so contention still shows; one",
              "that sleeps shows in the context switches.", "",
              "| writers pinned to CPUs | ops/s, 1 writer | 2 writers | ratio 2/1 (median, range) | / getppid()'s | per host CPU second: 2 x eff(2) / eff(1) (median, range) | voluntary context switches per 1000 ops, 1 / 2 writers | all runs 1 / 2 |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        labels = {"ue_writev_ft": "user_events writev, ftrace enabled, one file shared by the threads",
                  "ue_writev_ft_ownfd": "user_events writev, ftrace enabled, each thread its own file",
                  "marker": "trace_marker write (control)",
                  "getppid": "getppid() (control: what the host gives 2 vCPUs)"}
        for key in ("ue_writev_ft", "ue_writev_ft_ownfd", "marker", "getppid"):
            s = tc["scale"].get(key)
            if not s or 1 not in s or 2 not in s:
                continue
            cs = " / ".join("n/a" if s[n].get("vcsw") is None else f"{s[n]['vcsw']:.2f}" for n in (1, 2))
            x = tc["scaler"].get(key)
            rr = (f"{x['median']:.2f} ({x['lo']:.2f}-{x['hi']:.2f})" if x
                  else f"{s[2]['best'] / s[1]['best']:.2f}")
            nn = f"{x['norm']:.2f}" if x else ""
            c = tc["scalec"].get(key)
            cr = f"{c['median']:.2f} ({c['lo']:.2f}-{c['hi']:.2f})" if c else "n/a"
            L.append(f"| {labels[key]} | {fmt(s[1]['best'])} | {fmt(s[2]['best'])} | "
                     f"{rr} | {nn} | {cr} | {cs} | {s[1]['all']} / {s[2]['all']} |")
    for key, what in (("regtime", "registering 32000 new events (one process, one file, remote-write ABI, persistent)"),
                      ("enablers", "registering 10000 remote-write enablers of one event (one process)")):
        ch = tc["chunks"].get(key)
        if not ch:
            continue
        full = [c for c in ch if c[1] == 1000]
        total = sum(c[2] for c in ch)
        count = sum(c[1] for c in ch)
        L += ["", f"Time for {what}: {count} registrations in {total:.2f} s wall "
              f"({total / count * 1e6:.0f} us each on average)."]
        if len(full) >= 2 and full[0][2] > 0:
            L.append(f"Last 1000 vs first 1000: {full[-1][2]:.3f} s vs {full[0][2]:.3f} s, "
                     f"ratio {full[-1][2] / full[0][2]:.2f}; per 1000 (s): "
                     + ", ".join(f"{c[2]:.2f}" for c in ch) + ".")

    if tc["mem"]:
        L += ["", "## Kernel memory (plain TCG boot, -smp 2)", "",
              "Differences of /proc/meminfo (after sync, drop_caches) divided by the",
              "number of units; MemFree/MemAvailable are the decrease; live slab objects",
              "is the growth of active objects x object size over /proc/slabinfo (freed",
              "objects left in partial slabs do not count; they do in Slab).", "",
              "| unit | units | MemFree | MemAvailable | Slab | live slab objects | SUnreclaim | Percpu | PageTables | VmallocUsed |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        names = {"event_held": "event, registering process alive (event + enabler + file reference)",
                 "event": "event, registering process gone (event alone)",
                 "enabler": "extra remote-write enabler of one event"}
        for key in ("event_held", "event", "enabler"):
            m = tc["mem"].get(key)
            if not m:
                continue
            L.append(f"| {names[key]} | {m['units']} | " + " | ".join(
                fmt(m.get(f)) for f in ("MemFree", "MemAvailable", "Slab", "SlabObjects", "SUnreclaim",
                                        "Percpu", "PageTables", "VmallocUsed")) + " |")
        for key in ("event_held", "event", "enabler"):
            sl = tc["slab"].get(key)
            if sl:
                L.append("")
                L.append(f"Slab caches whose live objects grew, bytes per unit ({names[key]}): " +
                         ", ".join(f"{n} {v:.0f}" for n, v in sl) + ".")

    L += prof_table(ic)
    L += kmod_table(ic)
    L += ["", "## Targets", "", "| target | status | figures |", "| --- | --- | --- |"]
    for name, status, detail in targets(ic, tc):
        L.append(f"| {name} | {status} | {detail} |")
    info = [i for i in ic["info"] + tc["info"] if not i.startswith("dmesg")]
    if info:
        L += ["", "## Run log", ""] + [f"    {i}" for i in info]
    return "\n".join(L) + "\n"


def chart(kernels, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(15, 7), gridspec_kw={"width_ratios": [3, 1.4]})
    width = 0.8 / max(1, len(kernels))
    ax = axes[0]
    rows = [r for r in CHART_ROWS if any(net(ic, r) is not None for _, ic, _ in kernels)]
    for i, (rel, ic, _) in enumerate(kernels):
        ys = [j + i * width for j in range(len(rows))]
        vals = [net(ic, r) or 0 for r in rows]
        bars = ax.barh(ys, vals, height=width, label=rel)
        for b, v in zip(bars, vals):
            ax.text(b.get_width(), b.get_y() + b.get_height() / 2, f" {v:.0f}",
                    va="center", fontsize=7)
    ax.set_yticks([j + width * (len(kernels) - 1) / 2 for j in range(len(rows))])
    ax.set_yticklabels([CHART_SHORT[r] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("guest instructions per operation (-icount), minus loop overhead")
    ax.set_title("Write path")
    ax.legend(fontsize=8, loc="lower right")

    ax = axes[1]
    regs = [(f"reg_{abi}_{lvl}", f"{'status' if abi == 's' else 'remote'}, {lvl} exist")
            for lvl in REG_LEVELS for abi, _ in REG_ABIS]
    regs += [(f"reg_own_{lvl}", f"remote, own {lvl}") for lvl in OWN_LEVELS]
    for i, (rel, ic, _) in enumerate(kernels):
        ys = [j + i * width for j in range(len(regs))]
        vals = [net(ic, k) or 0 for k, _ in regs]
        bars = ax.barh(ys, [v / 1000 for v in vals], height=width, label=rel)
        for b, v in zip(bars, vals):
            ax.text(b.get_width(), b.get_y() + b.get_height() / 2, f" {v / 1000:.0f}k",
                    va="center", fontsize=7)
    ax.set_yticks([j + width * (len(kernels) - 1) / 2 for j in range(len(regs))])
    ax.set_yticklabels([lab for _, lab in regs], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("thousand instructions per new registration")
    ax.set_title("DIAG_IOCSREG of a new event\n(N made by other processes / by the same one)")
    fig.suptitle("user_events.ko path lengths by kernel")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def readme_block(kernels, meta):
    L = ["<!-- results:begin (generated by tests/bench/report.py; edits here are replaced) -->", ""]
    if meta:
        L += [meta, ""]
    L += ["![path lengths](results/chart.png)", ""]
    for rel, ic, tc in kernels:
        L += [f"### {rel} ([full table](results/{rel}.md))", "",
              "| target | status | figures |", "| --- | --- | --- |"]
        for name, status, detail in targets(ic, tc):
            L.append(f"| {name} | **{status}** | {detail} |")
        L.append("")
    L += ["Key rows (guest instructions per operation, minus loop overhead):", "",
          "| row | " + " | ".join(rel for rel, _, _ in kernels) + " |",
          "| --- | " + " | ".join("---:" for _ in kernels) + " |"]
    for key in CHART_ROWS + ["ue_r_write_ft", "ue_s_write_perf", "getppid_perf", "ue_s_writev_ft_mt", "reg_s_1", "reg_s_32000", "reg_r_1", "reg_r_32000",
                             "reg_own_1", "reg_own_1000", "reg_own_8000"]:
        label = dict(ROWS).get(key, key.replace("reg_s_", "DIAG_IOCSREG status ABI, events existing: ")
                               .replace("reg_r_", "DIAG_IOCSREG remote ABI, events existing: ")
                               .replace("reg_own_", "DIAG_IOCSREG remote ABI, held by the same process: "))
        L.append(f"| {label} | " + " | ".join(fmt(net(ic, key)) for _, ic, _ in kernels) + " |")
    L += ["", "<!-- results:end -->"]
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--readme")
    ap.add_argument("--meta", default="")
    ap.add_argument("kernels", nargs="+", help="REL=ICOUNT_LOG,SCALE_LOG,TCG_LOG (any may be empty)")
    a = ap.parse_args()

    os.makedirs(a.out, exist_ok=True)
    kernels = []
    for spec in a.kernels:
        rel, logs = spec.split("=", 1)
        icl, *rest = logs.split(",")
        tc = parse(None)
        for log in rest:
            d = parse(log)
            for k, v in d.items():
                if isinstance(v, dict):
                    tc[k].update(v)
                elif isinstance(v, list):
                    tc[k].extend(v)
                else:
                    tc[k] = tc[k] or v
        kernels.append((rel, parse(icl), tc))

    summary = {}
    for rel, ic, tc in kernels:
        with open(os.path.join(a.out, f"{rel}.md"), "w") as f:
            f.write(kernel_md(rel, ic, tc, a.meta))
        summary[rel] = {
            "rows": {k: v["min"] for k, v in ic["rows"].items()},
            "loop": ic["rows"].get("loop", {}).get("min"),
            "scale": {k: {str(n): v["best"] for n, v in s.items()} for k, s in tc["scale"].items()},
            "mem": tc["mem"],
            "targets": [{"target": n, "status": s, "figures": d} for n, s, d in targets(ic, tc)],
        }
        if ic["graph"]:
            with open(os.path.join(a.out, f"{rel}.callgraph.txt"), "w") as f:
                f.write(f"# function_graph of one operation of each row on {rel}, every\n"
                        "# traceable function patched (durations include the tracer: read the\n"
                        "# structure, not the times; kernel/trace/ is never traced)\n")
                for row, lines in ic["graph"].items():
                    f.write(f"\n## {row}\n")
                    f.write("\n".join(lines) + "\n")
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump({"meta": a.meta, "kernels": summary}, f, indent=1, sort_keys=True)
    try:
        chart(kernels, os.path.join(a.out, "chart.png"))
    except ImportError as e:
        print(f"report.py: no chart: {e} (install python3-matplotlib)", file=sys.stderr)
        return 1

    if a.readme and os.path.exists(a.readme):
        text = open(a.readme).read()
        block = readme_block(kernels, a.meta)
        new, n = re.subn(r"<!-- results:begin.*?<!-- results:end -->", lambda _: block,
                         text, flags=re.S)
        if n == 0:
            new = text.rstrip("\n") + "\n\n" + block + "\n"
        with open(a.readme, "w") as f:
            f.write(new)
    for rel, ic, tc in kernels:
        for name, status, detail in targets(ic, tc):
            print(f"{rel}: {status:6} {name}: {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
