#!/usr/bin/env python3
"""Where a kernel's warps stall, by source line: Nsight Compute's SASS view
joined to the line table of the cubin the kernel was built from.

On the GPU machine (it has ncu; this machine has no disassembler):
  ncu --clock-control none -k regex:workerKernel --launch-skip 4 --launch-count 1 \\
      --section SourceCounters -o prof tirun bench PLAN W --contexts 1 ...
  ncu -i prof.ncu-rep --page source --csv --print-source sass > sass.csv
Here, with the cubin of the same build (nvcc --keep writes it; CMake keeps
the Stream worker's in build/lib/Runtime/cuda/stream-worker-keep/):
  python3 bench/ncu_source_lines.py sass.csv --cubin StreamWorker.sm_90.cubin \\
      --function workerKernelILb0E [--top 40]

Prints the warp-stall samples by file:line (innermost inlined location), each
with its three largest stall reasons, then the samples by file. The line table
comes from `readelf --debug-dump=decodedline` (binutils reads the cubin's
DWARF .debug_line; NVIDIA's extended opcodes only draw warnings), its
sequences named by the symbols of the `.rela.debug_line` relocations, in order;
--lines FILE takes a saved dump of both (`readelf -rW` then the decoded lines)
instead of running readelf.

With --regions BYTES, then the samples by BYTES of the function's code: where a
loop or an op spends its time when its lines are inlined from many files (the
attention op at context 4,096 in docs/PERFORMANCE.md, step 11): each region's
share of the samples, its executed warp instructions (where the export has
them) and its three lines with the most instructions.

With --range LO:HI (hex offsets into the function), only the instructions in
[LO, HI): one op's code, such as an outlined device function the kernel calls
(docs/PERFORMANCE.md, step 12), its percentages of the range's samples.
"""
import argparse
import bisect
import collections
import csv
import re
import subprocess
import sys


def readelf_dump(cubin):
    out = []
    for flags in (["-rW"], ["--debug-dump=decodedline"]):
        out.append(subprocess.run(["readelf", *flags, cubin], capture_output=True, text=True,
                                  check=True).stdout)
    return "\n".join(out)


def line_tables(dump):
    """{symbol: sorted [(address, 'file:line')]} for every sequence of the dump."""
    symbols, in_rela = [], False
    for line in dump.splitlines():
        if line.startswith("Relocation section"):
            in_rela = "'.rela.debug_line'" in line
            continue
        m = re.match(r"^([0-9a-f]{16})\s+\S+\s+\S+(?:\s+\S+)?\s+[0-9a-f]{16}\s+(\S+)", line)
        if in_rela and m:
            symbols.append((int(m.group(1), 16), m.group(2)))
    symbols = [name for _, name in sorted(symbols)]
    sequences, last = [], None
    for line in dump.splitlines():
        m = re.match(r"^(\S+)\s+(\d+)\s+(0x[0-9a-f]+|0)\s", line)
        if not m:
            continue
        address = int(m.group(3), 16)
        if last is None or address < last:
            sequences.append([])
        last = address
        sequences[-1].append((address, f"{m.group(1)}:{m.group(2)}"))
    if len(symbols) != len(sequences):
        sys.exit(f"error: {len(sequences)} line sequences but {len(symbols)} relocated symbols")
    return {name: sorted(seq) for name, seq in zip(symbols, sequences)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sass_csv")
    ap.add_argument("--cubin")
    ap.add_argument("--lines", help="a saved `readelf -rW` + decoded-lines dump")
    ap.add_argument("--function", required=True, help="a substring of the kernel's symbol")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--regions", type=int, metavar="BYTES",
                    help="also print the samples by BYTES of code (regions with 0.3%% or more)")
    ap.add_argument("--range", metavar="LO:HI",
                    help="only the instructions at offsets [LO, HI) of the function (hex)")
    args = ap.parse_args()
    span = None
    if args.range:
        try:
            span = tuple(int(x, 16) for x in args.range.split(":"))
        except ValueError:
            span = ()
        if len(span) != 2 or span[0] >= span[1]:
            sys.exit(f"error: --range {args.range}: want LO:HI, hex offsets with LO < HI")
    if not args.cubin and not args.lines:
        sys.exit("error: give --cubin or --lines")
    dump = open(args.lines).read() if args.lines else readelf_dump(args.cubin)
    tables = {k: v for k, v in line_tables(dump).items() if args.function in k}
    if len(tables) != 1:
        sys.exit(f"error: --function {args.function} names {len(tables)} of the cubin's functions")
    (table,) = tables.values()
    addresses = [a for a, _ in table]

    rows = list(csv.reader(open(args.sass_csv)))
    header = next((i for i, r in enumerate(rows) if r and r[0] == "Address"), None)
    if header is None or "Warp Stall Sampling (All Samples)" not in rows[header]:
        sys.exit(f"error: {args.sass_csv} has no 'Address' row with 'Warp Stall Sampling (All "
                 "Samples)': not `ncu --page source --csv --print-source sass` of a report "
                 "with the SourceCounters section")
    names, data = rows[header], [r for r in rows[header + 1:] if r and r[0].startswith("0x")]
    if not data:
        sys.exit(f"error: {args.sass_csv} lists no instructions")
    samples = names.index("Warp Stall Sampling (All Samples)")
    reasons = [i for i, n in enumerate(names) if n.startswith("stall_") and "Not Issued" not in n]
    base = int(data[0][0], 16)
    if span:
        data = [r for r in data if span[0] <= int(r[0], 16) - base < span[1]]
    total = sum(int(r[samples] or 0) for r in data)
    if total == 0:
        sys.exit("error: no stall samples " + (f"in --range {args.range}" if span else "in the CSV"))
    executed = names.index("Instructions Executed") if "Instructions Executed" in names else None
    by_line, why = collections.Counter(), collections.defaultdict(collections.Counter)
    regions = collections.defaultdict(lambda: [0, 0, collections.Counter()])
    for r in data:
        n = int(r[samples] or 0)
        if not n and not args.regions:
            continue  # Only the regions count instructions without samples.
        offset = int(r[0], 16) - base
        i = bisect.bisect_right(addresses, offset) - 1
        where = table[i][1] if i >= 0 else "?"
        if args.regions:
            region = regions[offset // args.regions]
            region[0] += n
            region[1] += int(r[executed] or 0) if executed is not None else 0
            region[2][where] += 1
        if not n:
            continue
        by_line[where] += n
        for j in reasons:
            if r[j] and int(r[j]):
                why[where][names[j][len("stall_"):]] += int(r[j])
    print(f"{total} samples over {len(data)} instructions")
    print(f"{'%':>6}  {'file:line':32} largest stall reasons (% of all samples)")
    for where, n in by_line.most_common(args.top):
        top = ", ".join(f"{k} {100 * v / total:.1f}" for k, v in why[where].most_common(3))
        print(f"{100 * n / total:6.2f}  {where:32} {top}")
    by_file = collections.Counter()
    for where, n in by_line.items():
        by_file[where.rsplit(":", 1)[0]] += n
    print("by file: " + ", ".join(f"{f} {100 * n / total:.1f}" for f, n in by_file.most_common()))
    if args.regions:
        print(f"by {args.regions} bytes of code (regions with 0.3% of the samples or more):")
        for k in sorted(regions):
            n, ran, lines = regions[k]
            if 1000 * n < 3 * total:
                continue
            ran = f" executed {ran:>10}" if executed is not None else ""
            top = ", ".join(f"{w} x{c}" for w, c in lines.most_common(3))
            print(f"  {k * args.regions:#8x}-{(k + 1) * args.regions:#8x} {100 * n / total:6.2f}%{ran}  {top}")


if __name__ == "__main__":
    main()
