#!/usr/bin/python3
"""ptx_of.py OUT.c OUT.ptx [OUT.cubin] - the PTX (and cubin) rlxc embedded in
the OUT.c of a --target cuda model, written out as files: for ptxas, and for
the stand-in driver's check that the host loads exactly these bytes
(RLX_SHIM_EXPECT_PTX). A model without kernels has an empty PTX string:
OUT.ptx is then empty. Exit 1 if OUT.c holds no PTX array (or no cubin when
one is asked for)."""
import ast
import re
import sys


def main():
    src = open(sys.argv[1]).read()
    m = re.search(r"^static const char \w+_ptx\[\] =\n(.*?)\n    ;$", src, re.S | re.M)
    if m:
        ptx = "".join(ast.literal_eval(s) for s in re.findall(r'^    (".*")$', m.group(1), re.M))
    elif re.search(r'^static const char \w+_ptx\[\] = "";$', src, re.M):
        ptx = ""
    else:
        sys.exit("ptx_of.py: %s holds no PTX" % sys.argv[1])
    with open(sys.argv[2], "w") as f:
        f.write(ptx)
    if len(sys.argv) > 3:
        m = re.search(r"^static const unsigned char \w+_cubin\[\d+\] = \{\n(.*?)\n\};$", src, re.S | re.M)
        if not m:
            sys.exit("ptx_of.py: %s holds no cubin" % sys.argv[1])
        with open(sys.argv[3], "wb") as f:
            f.write(bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", m.group(1))))


if __name__ == "__main__":
    main()
