#!/usr/bin/env python3
"""The peer a user would write: find the GPU OOMs in a training log with `re`.

    bench/python_peer.py LOG

Plain Python 3, standard library only: reads the log a line at a time (binary
mode, so that a line is what ends in '\\n', as grep counts lines), keeps the
lines that mention an OOM, pulls the numbers out of PyTorch's allocator
message, and prints a JSON list, one entry per OOM line:

    [{"line": 1234, "text": "...", "requested": 2147483648, "total": ..., "free": ...,
      "allocated": ..., "reserved": ...}, ...]

The yardstick of bench/diagnose_matrix.sh ("at least 10x the Python peer"):
honest and straightforward, neither deliberately slow nor tuned.
"""

import json
import re
import sys

OOM = re.compile(rb"out of memory|RESOURCE_EXHAUSTED|OutOfMemoryError")

SIZE = r"([0-9.]+) (bytes|KiB|MiB|GiB)"
NUMBERS = {
    "requested": re.compile(r"Tried to allocate " + SIZE),
    "total": re.compile(r"total capacit?y of " + SIZE + r"|" + SIZE + r" total capacity"),
    "free": re.compile(r"of which " + SIZE + r" is free|" + SIZE + r" free;"),
    "allocated": re.compile(r"Of the allocated memory " + SIZE + r"|" + SIZE + r" already allocated"),
    "reserved": re.compile(r"and " + SIZE + r" is reserved by PyTorch but unallocated|" + SIZE
                           + r" reserved in total by PyTorch|" + SIZE + r" cached\)"),
}
UNITS = {"bytes": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}


def size_of(match):
    groups = [g for g in match.groups() if g is not None]
    return int(float(groups[0]) * UNITS[groups[1]])


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        sys.exit(2)
    found = []
    with open(sys.argv[1], "rb") as f:
        for number, raw in enumerate(f, 1):
            if not OOM.search(raw):
                continue
            text = raw.decode("utf-8", errors="ignore").rstrip("\r\n")
            entry = {"line": number, "text": text[-2000:]}
            for name, pattern in NUMBERS.items():
                m = pattern.search(text)
                entry[name] = size_of(m) if m else None
            found.append(entry)
    json.dump(found, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
