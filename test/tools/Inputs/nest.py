#!/usr/bin/env python3
"""Writes MLIR text nested N deep to stdout: nest.py KIND N, KIND one of
modules (N nested `module {`), arrays (an attribute [[[...]]]), tuples (a tuple<tuple<...>>
type alias), strings (a valid model whose string attribute and comment hold N brackets,
which are not nesting), minus (an affine_map attribute of N unary minus signs) or sum (an
affine_map of N terms): the last two recurse in the parser without a bracket."""
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
elif kind == "minus":
    print("module attributes {m = affine_map<(d0) -> (" + "-" * n + "d0)>} {}")
elif kind == "sum":
    print("module attributes {m = affine_map<(d0) -> (" + " + ".join(["d0"] * n) + ")>} {}")
else:
    sys.exit(f"unknown kind {kind}")
