// The passes that emit the plan file.
#ifndef DP_PLAN_TARGET_PASSES
#define DP_PLAN_TARGET_PASSES

include "mlir/Pass/PassBase.td"

def PlanVerifyPass : Pass<"plan-verify", "mlir::ModuleOp"> {
  let summary = "Check the planned program as the runtime will: the end of the plan phase";
  let description = [{
    The contract of the plan phase, as `graph-verify-steps` and `dist-verify` end theirs:
    encodes the module's `plan.program` (and its servers', after `plan-memory`) as the .dpx
    image `plan-write` would write, and runs the runtime's plan-file verifier on those bytes
    (header, checksum, FlatBuffer structure, buffer ids, offsets and alignment, arities,
    attribute names, the collective manifest). Writes nothing and leaves the IR unchanged, so
    every compilation is checked, with or without an output file.
  }];
}

def PlanWritePass : Pass<"plan-write", "mlir::ModuleOp"> {
  let summary = "Serialise the planned program to a .dpx file the runtime has verified";
  let description = [{
    The last pass of the plan phase. Encodes the module's `plan.program` (after
    `plan-memory`) as a .dpx image, runs the runtime's plan-file verifier on those bytes
    (header, checksum, FlatBuffer structure, buffer ids, offsets and alignment, arities,
    attribute names, the collective manifest: everything `dprun` checks before it builds
    the kernels; shapes and attribute values are checked by the kernels themselves at
    load), and writes the image to `output` atomically: a temporary file beside it,
    flushed to disk, renamed over the target (through a symbolic link, keeping the old
    file's mode), and the directory flushed; an interrupted write leaves the previous file
    whole. A target that is not a regular file is refused. Leaves the IR unchanged.
    `dpc compile` and `dp-opt --dp-compile="... output=F"` write the same bytes.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"\"", "The .dpx file to write">,
  ];
}

#endif // DP_PLAN_TARGET_PASSES
