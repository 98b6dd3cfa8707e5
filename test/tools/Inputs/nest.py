#!/usr/bin/env python3
"""Writes MLIR text nested N deep to stdout: nest.py KIND N, KIND one of
modules (N nested `module {`), arrays (an attribute [[[...]]]), tuples (a tuple<tuple<...>>
type alias), or strings (a valid model whose string attribute and comment hold N brackets,
which are not nesting)."""
import sys

kind, n = sys.argv[1], int(sys.argv[2])
if kind == "modules":
    print("module {" * n + "}" * n)
elif kind == "arrays":
    print("module attributes {a = " + "[" * n + "1" + "]" * n + "} {}")
elif kind == "tuples":
    print("!t = " + "tuple<" * n + "i32" + ">" * n)
elif kind == "strings":
    with open(sys.argv[3]) as f:
        model = f.read()
    print("// " + "(" * n)
    print(model.replace("attributes {", 'attributes {note = "' + "{[(<" * n + '", ', 1))
else:
    sys.exit(f"unknown kind {kind}")
