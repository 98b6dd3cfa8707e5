// RUN: dp-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of dialect/Plan/IR/PlanOps.cpp and PlanDialect.cpp (#plan.init),
// then the generated (ODS) constraint failures that matter.

// Tests that a program needs a positive batch.
// expected-error @+1 {{'plan.program' op needs a positive batch, found 0}}
plan.program "m" attributes {batch = 0 : i64} {
}

// -----

// Tests that a program needs a batch (ODS).
// expected-error @+1 {{'plan.program' op requires attribute 'batch'}}
plan.program "m" {
}

// -----

// Tests that a program's allreduce precision is bf16 (f32 is its absence).
// expected-error @+1 {{'plan.program' op has allreduce_precision 'fp16': bf16, or none for f32}}
plan.program "m" attributes {batch = 8 : i64, processes = 2 : i64, allreduce_precision = "fp16"} {
}

// -----

// Tests that a program's nodes divide its processes evenly.
// expected-error @+1 {{'plan.program' op spreads 4 processes over 3 nodes: nodes must be at least 1 and divide them evenly}}
plan.program "m" attributes {batch = 4 : i64, processes = 4 : i64, nodes = 3 : i64} {
}

// -----

// Tests that a program's learning-rate schedule must parse.
// expected-error @+1 {{'plan.program' op has an invalid lr_schedule 'cosine:epochs=0': cosine: epochs must be positive (from 0.001 to 1000000000 epochs), found 0}}
plan.program "m" attributes {batch = 1 : i64, lr_schedule = "cosine:epochs=0"} {
}

// -----

// Tests that a view keeps the element count.
plan.program "m" attributes {batch = 1 : i64} {
  plan.step "s" {
    %0 = plan.alloc : memref<4x3xf32>
    // expected-error @+1 {{'plan.view' op cannot view 'memref<4x3xf32>' as 'memref<10xf32>'}}
    %1 = plan.view %0 : memref<4x3xf32> to memref<10xf32>
  }
}

// -----

// Tests that a kernel's number of inputs must be in its range (dense: 2 or 3).
plan.program "m" attributes {batch = 1 : i64} {
  %x = plan.input "x" as samples : memref<8x4xf32>
  plan.step "s" {
    %0 = plan.alloc : memref<8x3xf32>
    // expected-error @+1 {{'plan.kernel' op kernel 'dense' takes 2 to 3 inputs, found 1}}
    plan.kernel "dense" ins(%x : memref<8x4xf32>) outs(%0 : memref<8x3xf32>)
  }
}

// -----

// Tests that a kernel's number of outputs must match (momentum_update writes param and velocity).
plan.program "m" attributes {batch = 1 : i64} {
  %w = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<4xf32>
  %g = plan.grad "w" : memref<4xf32>
  plan.step "s" {
    // expected-error @+1 {{'plan.kernel' op kernel 'momentum_update' takes 2 outputs, found 1}}
    plan.kernel "momentum_update" ins(%g : memref<4xf32>) outs(%w : memref<4xf32>)
  }
}

// -----

// Tests that a kernel must be one the runtime knows.
plan.program "m" attributes {batch = 1 : i64} {
  plan.step "s" {
    %0 = plan.alloc : memref<4xf32>
    // expected-error @+1 {{'plan.kernel' op unknown kernel 'conv3d'}}
    plan.kernel "conv3d" ins(%0 : memref<4xf32>) outs(%0 : memref<4xf32>)
  }
}

// -----

// Tests that an initialiser kind must be known.
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{unknown initialiser kind 'xavier'}}
  %0 = plan.param "w" {init = #plan.init<kind = "xavier">} : memref<4xf32>
}

// -----

// Tests that a 'data' initialiser needs its data, f32, and that only it takes data.
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{initialiser 'data' needs its data}}
  %0 = plan.param "w" {init = #plan.init<kind = "data">} : memref<2xf32>
}

// -----

plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{only a 'data' initialiser takes data, not 'zeros'}}
  %0 = plan.param "w" {init = #plan.init<kind = "zeros", data = dense<[1.0, 2.0]> : tensor<2xf32>>} : memref<2xf32>
}

// -----

plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{initialiser data must be f32, found 'tensor<2xf64>'}}
  %0 = plan.param "w" {init = #plan.init<kind = "data", data = dense<[1.0, 2.0]> : tensor<2xf64>>} : memref<2xf32>
}

// -----

// Tests that Glorot initialisers need both fans.
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{initialiser 'glorot_uniform' needs positive fan_in and fan_out}}
  %0 = plan.param "w" {init = #plan.init<kind = "glorot_uniform", fan_in = 4>} : memref<4x3xf32>
}

// -----

// Tests that He initialisers need a fan_in.
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{initialiser 'he_normal' needs a positive fan_in}}
  %0 = plan.param "w" {init = #plan.init<kind = "he_normal", fan_out = 3>} : memref<4x3xf32>
}

// -----

// Tests that persistent buffers live in a program (ODS).
// expected-error @+1 {{'plan.param' op expects parent op 'plan.program'}}
%0 = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<4xf32>

// -----

// Tests that transient buffers live in a step (ODS).
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'plan.alloc' op expects parent op 'plan.step'}}
  %0 = plan.alloc : memref<4xf32>
}

// -----

// Tests that kernels live in a step (ODS).
plan.program "m" attributes {batch = 1 : i64} {
  %0 = plan.input "x" as samples : memref<4xf32>
  // expected-error @+1 {{'plan.kernel' op expects parent op 'plan.step'}}
  plan.kernel "copy" ins(%0 : memref<4xf32>) outs(%0 : memref<4xf32>)
}

// -----

// Tests that buffers hold f32 or i32 only (ODS).
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'plan.param' op result #0 must be 0D/1D/2D/3D/4D/5D/6D memref of 32-bit float or 32-bit signless integer or bfloat16 type values, but got 'memref<4xf64>'}}
  %0 = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<4xf64>
}

// -----

// Tests that a parameter needs an initialiser (ODS).
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'plan.param' op requires attribute 'init'}}
  %0 = plan.param "w" : memref<4xf32>
}

// -----

// Tests that a program needs at least one device per process.
// expected-error @+1 {{'plan.program' op needs at least one device and one process, found 0 and 1}}
plan.program "m" attributes {batch = 1 : i64, devices_per_process = 0 : i64} {
}

// -----

// Tests that a program needs at least one process.
// expected-error @+1 {{'plan.program' op needs at least one device and one process, found 2 and 0}}
plan.program "m" attributes {batch = 1 : i64, devices_per_process = 2 : i64, processes = 0 : i64} {
}

// -----

// Tests that a persistent buffer must be on a device of the process (devices 0 to R - 1).
plan.program "m" attributes {batch = 1 : i64, devices_per_process = 2 : i64} {
  // expected-error @+1 {{'plan.param' op is on device 2 but the program has 2 device(s) per process}}
  %w = plan.param "w" {init = #plan.init<kind = "zeros">, device = 2 : i64} : memref<4xf32>
}

// -----

// Tests that a device cannot be negative.
plan.program "m" attributes {batch = 1 : i64, devices_per_process = 2 : i64} {
  // expected-error @+1 {{'plan.bucket' op is on device -1 but the program has 2 device(s) per process}}
  %b = plan.bucket 0 {device = -1 : i64} : memref<16xf32>
}

// -----

// Tests that a transient buffer of a one-device program must be on device 0.
plan.program "m" attributes {batch = 1 : i64} {
  plan.step "s" {
    // expected-error @+1 {{'plan.alloc' op is on device 1 but the program has 1 device(s) per process}}
    %0 = plan.alloc {device = 1 : i64} : memref<4xf32>
  }
}

// -----

// Tests that a gradient outside a bucket has no bucket_offset.
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'plan.grad' op has a bucket_offset but no bucket}}
  %g = plan.grad "w" {bucket_offset = 0 : i64} : memref<4xf32>
}

// -----

// Tests that a gradient in a bucket needs its bucket_offset.
plan.program "m" attributes {batch = 1 : i64} {
  %b = plan.bucket 0 : memref<16xf32>
  // expected-error @+1 {{'plan.grad' op in a bucket needs a bucket_offset}}
  %g = plan.grad "w" in %b : memref<16xf32> : memref<4xf32>
}

// -----

// Tests that a gradient must fit its bucket (4 elements from 14 overrun 16).
plan.program "m" attributes {batch = 1 : i64} {
  %b = plan.bucket 0 : memref<16xf32>
  // expected-error @+1 {{'plan.grad' op elements [14, 18) do not fit its bucket of 16}}
  %g = plan.grad "w" in %b : memref<16xf32> {bucket_offset = 14 : i64} : memref<2x2xf32>
}

// -----

// Tests that a gradient cannot start before its bucket.
plan.program "m" attributes {batch = 1 : i64} {
  %b = plan.bucket 0 : memref<16xf32>
  // expected-error @+1 {{'plan.grad' op elements [-1, 3) do not fit its bucket of 16}}
  %g = plan.grad "w" in %b : memref<16xf32> {bucket_offset = -1 : i64} : memref<4xf32>
}

// -----

// Tests that a gradient is on the device of its bucket.
plan.program "m" attributes {batch = 1 : i64, devices_per_process = 2 : i64} {
  %b = plan.bucket 0 {device = 1 : i64} : memref<16xf32>
  // expected-error @+1 {{'plan.grad' op is on device 0, its bucket on device 1}}
  %g = plan.grad "w" in %b : memref<16xf32> {bucket_offset = 0 : i64} : memref<4xf32>
}

// -----

// Tests that a parameter in a broadcast's bucket fits it (4 elements from 14 overrun 16).
plan.program "m" attributes {batch = 1 : i64} {
  %b = plan.bucket 1 : memref<16xf32>
  // expected-error @+1 {{'plan.param' op elements [14, 18) do not fit its bucket of 16}}
  %w = plan.param "w" in %b : memref<16xf32> {bucket_offset = 14 : i64, init = #plan.init<kind = "zeros">} : memref<4xf32>
}

// -----

// Tests that a parameter in a bucket needs its bucket_offset, and one outside has none.
plan.program "m" attributes {batch = 1 : i64} {
  %b = plan.bucket 1 : memref<16xf32>
  // expected-error @+1 {{'plan.param' op in a bucket needs a bucket_offset}}
  %w = plan.param "w" in %b : memref<16xf32> {init = #plan.init<kind = "zeros">} : memref<4xf32>
}

// -----

plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'plan.param' op has a bucket_offset but no bucket}}
  %w = plan.param "w" {bucket_offset = 0 : i64, init = #plan.init<kind = "zeros">} : memref<4xf32>
}

// -----

// Tests that a parameter is on the device of its bucket.
plan.program "m" attributes {batch = 1 : i64, devices_per_process = 2 : i64} {
  %b = plan.bucket 1 {device = 1 : i64} : memref<16xf32>
  // expected-error @+1 {{'plan.param' op is on device 0, its bucket on device 1}}
  %w = plan.param "w" in %b : memref<16xf32> {bucket_offset = 0 : i64, init = #plan.init<kind = "zeros">} : memref<4xf32>
}

// -----

// Tests that state one process holds lies in no bucket (every process exchanges a bucket).
plan.program "m" attributes {batch = 1 : i64, processes = 2 : i64} {
  %b = plan.bucket 1 : memref<16xf32>
  // expected-error @+1 {{'plan.param' op holds state one process alone holds: it cannot lie in a bucket, which every process exchanges}}
  %m = plan.param "w/m" in %b : memref<16xf32> {bucket_offset = 0 : i64, init = #plan.init<kind = "zeros">, optimizer_state, process = 1 : i64} : memref<4xf32>
}

// -----

// Tests that only weights lie in a bucket (a broadcast's): optimizer state stays where it is.
plan.program "m" attributes {batch = 1 : i64} {
  %b = plan.bucket 1 : memref<16xf32>
  // expected-error @+1 {{'plan.param' op is optimizer state: only weights lie in a bucket (a broadcast's)}}
  %m = plan.param "w/m" in %b : memref<16xf32> {bucket_offset = 0 : i64, init = #plan.init<kind = "zeros">, optimizer_state} : memref<4xf32>
}

// -----

// Tests that a parameter in a bucket is of the bucket's element type (its offset counts both's
// elements).
plan.program "m" attributes {batch = 1 : i64} {
  %b = plan.bucket 1 : memref<16xf32>
  // expected-error @+1 {{'plan.param' op of 'bf16' cannot lie in a bucket of 'f32'}}
  %w = plan.param "w" in %b : memref<16xf32> {bucket_offset = 0 : i64, init = #plan.init<kind = "zeros">} : memref<4xbf16>
}

// -----

// Tests that a bucket is a flat f32 buffer (ODS).
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'plan.bucket' op result #0 must be 1D memref of 32-bit float values, but got 'memref<4x4xf32>'}}
  %b = plan.bucket 0 : memref<4x4xf32>
}

// -----

// Tests that a kernel runs on one device: its buffers cannot come from two.
plan.program "m" attributes {batch = 1 : i64, devices_per_process = 2 : i64} {
  %x = plan.input "x" as samples : memref<4xf32>
  %y = plan.input "x" as samples {device = 1 : i64} : memref<4xf32>
  plan.step "s" {
    %0 = plan.alloc {device = 1 : i64} : memref<4xf32>
    // expected-error @+1 {{'plan.kernel' op mixes buffers of devices 0 and 1}}
    plan.kernel "add" ins(%x, %y : memref<4xf32>, memref<4xf32>) outs(%0 : memref<4xf32>)
  }
}

// -----

// Tests that a view is on the device of its source: an output on device 0 and an input viewed
// from device 1's buffer mix devices.
plan.program "m" attributes {batch = 1 : i64, devices_per_process = 2 : i64} {
  plan.step "s" {
    %0 = plan.alloc {device = 1 : i64} : memref<4xf32>
    %v = plan.view %0 : memref<4xf32> to memref<2x2xf32>
    %1 = plan.alloc : memref<2x2xf32>
    // expected-error @+1 {{'plan.kernel' op mixes buffers of devices 1 and 0}}
    plan.kernel "copy" ins(%v : memref<2x2xf32>) outs(%1 : memref<2x2xf32>)
  }
}

// -----

// Tests that a collective's input d must be device d's copy of the bucket.
plan.program "m" attributes {batch = 1 : i64, devices_per_process = 2 : i64} {
  %b0 = plan.bucket 0 : memref<16xf32>
  %b1 = plan.bucket 0 {device = 1 : i64} : memref<16xf32>
  plan.step "s" {
    // expected-error @+1 {{'plan.kernel' op collective input 0 must be device 0's buffer, found device 1}}
    plan.kernel "allreduce_start" ins(%b1, %b0 : memref<16xf32>, memref<16xf32>) {bucket = 0 : i64}
  }
}

// -----

// Tests the same for the wait, on a later input.
plan.program "m" attributes {batch = 1 : i64, devices_per_process = 2 : i64} {
  %b0 = plan.bucket 0 : memref<16xf32>
  plan.step "s" {
    // expected-error @+1 {{'plan.kernel' op collective input 1 must be device 1's buffer, found device 0}}
    plan.kernel "allreduce_wait" ins(%b0, %b0 : memref<16xf32>, memref<16xf32>) {bucket = 0 : i64}
  }
}

// -----

// Tests that a collective needs a bucket to average.
plan.program "m" attributes {batch = 1 : i64} {
  plan.step "s" {
    // expected-error @+1 {{'plan.kernel' op kernel 'allreduce_start' takes 1 to 64 inputs, found 0}}
    plan.kernel "allreduce_start" {bucket = 0 : i64}
  }
}

// -----

// Tests that a kernel takes only the attributes of its contract (Kernels.def).
plan.program "m" attributes {batch = 1 : i64} {
  %p = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<4xf32>
  plan.step "s" {
    %g = plan.alloc : memref<4xf32>
    // expected-error @+1 {{'plan.kernel' op kernel 'sgd_update' has no attribute 'learning_rate'}}
    plan.kernel "sgd_update" ins(%g : memref<4xf32>) outs(%p : memref<4xf32>) {lr = 1.0e-01 : f64, learning_rate = 1.0e-01 : f64}
  }
}

// -----

// Tests that a required attribute of the contract is present.
plan.program "m" attributes {batch = 1 : i64} {
  %p = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<4xf32>
  plan.step "s" {
    %g = plan.alloc : memref<4xf32>
    // expected-error @+1 {{'plan.kernel' op kernel 'sgd_update' needs attribute 'lr'}}
    plan.kernel "sgd_update" ins(%g : memref<4xf32>) outs(%p : memref<4xf32>)
  }
}

// -----

// Tests that a float attribute is a finite f64.
plan.program "m" attributes {batch = 1 : i64} {
  %p = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<4xf32>
  plan.step "s" {
    %g = plan.alloc : memref<4xf32>
    // expected-error @+1 {{'plan.kernel' op attribute 'lr' of kernel 'sgd_update' must be a finite f64, found 1 : i64}}
    plan.kernel "sgd_update" ins(%g : memref<4xf32>) outs(%p : memref<4xf32>) {lr = 1 : i64}
  }
}

// -----

// Tests that an integer attribute is an i64.
plan.program "m" attributes {batch = 1 : i64} {
  %x = plan.param "x" {init = #plan.init<kind = "zeros">} : memref<1x4x4x1xf32>
  plan.step "s" {
    %y = plan.alloc : memref<1x2x2x1xf32>
    // expected-error @+1 {{'plan.kernel' op attribute 'window_h' of kernel 'max_pool2d' must be a 64-bit integer, found 2.000000e+00 : f64}}
    plan.kernel "max_pool2d" ins(%x : memref<1x4x4x1xf32>) outs(%y : memref<1x2x2x1xf32>) {window_h = 2.0 : f64, window_w = 2 : i64, stride_h = 2 : i64, stride_w = 2 : i64}
  }
}

// -----

// Tests that a flag is 0 or 1.
plan.program "m" attributes {batch = 1 : i64} {
  %a = plan.param "a" {init = #plan.init<kind = "zeros">} : memref<2x2xf32>
  plan.step "s" {
    %c = plan.alloc : memref<2x2xf32>
    // expected-error @+1 {{'plan.kernel' op attribute 'transpose_a' of kernel 'matmul' must be 0 or 1, found 2 : i64}}
    plan.kernel "matmul" ins(%a, %a : memref<2x2xf32>, memref<2x2xf32>) outs(%c : memref<2x2xf32>) {transpose_a = 2 : i64}
  }
}

// -----

// Tests that an activation is one the runtime knows, by name.
plan.program "m" attributes {batch = 1 : i64} {
  %a = plan.param "a" {init = #plan.init<kind = "zeros">} : memref<2x2xf32>
  plan.step "s" {
    %c = plan.alloc : memref<2x2xf32>
    // expected-error @+1 {{'plan.kernel' op attribute 'activation' of kernel 'activation' must be an activation name (none, relu, sigmoid, tanh, softmax), found "gelu"}}
    plan.kernel "activation" ins(%a : memref<2x2xf32>) outs(%c : memref<2x2xf32>) {activation = "gelu"}
  }
}

// -----

// Tests that a workers' program needs a server.
// expected-error @+1 {{'plan.program' op a workers' program needs at least one server and no server index, found servers = 0}}
plan.program "m" attributes {batch = 1 : i64, servers = 0 : i64} {
}

// -----

// Tests that parameter-server workers run one device each.
// expected-error @+1 {{'plan.program' op parameter-server workers run one device each}}
plan.program "m" attributes {batch = 2 : i64, servers = 1 : i64, devices_per_process = 2 : i64} {
}

// -----

// Tests that staleness is -1 or a number of steps, 0 under sync.
// expected-error @+1 {{'plan.program' op has staleness 2: -1 (unbounded), or at least 0 (0 under sync)}}
plan.program "m" attributes {batch = 1 : i64, servers = 1 : i64, staleness = 2 : i64, sync} {
}

// -----

// Tests that the strategy needs servers.
// expected-error @+1 {{'plan.program' op has staleness or sync but no servers}}
plan.program "m" attributes {batch = 1 : i64, staleness = 2 : i64} {
}

// -----

// Tests that a server's program runs on one device of one process.
// expected-error @+1 {{'plan.program' op a server's program runs on one device of one process as a server index >= 0, found server 0 on 1 x 2}}
plan.program "m" attributes {batch = 1 : i64, server = 0 : i64, processes = 2 : i64} {
}

// -----

// Tests that a server's program has only its serve step.
// expected-error @+1 {{'plan.program' op is a server's program, whose one step is 'serve', but has 'train'}}
plan.program "m" attributes {batch = 1 : i64, server = 0 : i64} {
  plan.step "train" {
  }
}

// -----

// Tests that an input has a role the runtime knows.
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'plan.input' op has unknown role 'labels' (expected samples or targets)}}
  %x = plan.input "x" as labels : memref<4xf32>
}

// -----

// Tests that an output has a role the runtime knows.
plan.program "m" attributes {batch = 1 : i64} {
  plan.step "s" {
    %0 = plan.alloc : memref<f32>
    // expected-error @+1 {{'plan.output' op has unknown role 'accuracy' (expected loss, correct or logits)}}
    plan.output "acc" as accuracy, %0 : memref<f32>
  }
}

// -----

// Tests that the runtime finds one input of each role a device: two samples inputs of one
// device are refused, one on each of two devices are not.
plan.program "m" attributes {batch = 1 : i64, devices_per_process = 2 : i64} {
  %x0 = plan.input "x" as samples : memref<4xf32>
  %x1 = plan.input "x" as samples {device = 1 : i64} : memref<4xf32>
  // expected-error @+1 {{'plan.input' op is a second samples input of device 0}}
  %m = plan.input "mask" as samples : memref<4xf32>
}

// -----

// Tests that a step has one output of each role a device.
plan.program "m" attributes {batch = 1 : i64} {
  plan.step "s" {
    %0 = plan.alloc : memref<f32>
    %1 = plan.alloc : memref<f32>
    plan.output "loss" as loss, %0 : memref<f32>
    // expected-error @+1 {{'plan.output' op is a second loss output of device 0}}
    plan.output "xent" as loss, %1 : memref<f32>
  }
}

// -----

// Tests that a program's accumulation is at least 2 micro-shards when given.
// expected-error @+1 {{'plan.program' op has accumulation 1: at least 2 micro-shards, and no parameter servers}}
plan.program "m" attributes {batch = 4 : i64, accumulation = 1 : i64} {
}

// -----

// Tests that a workers' program of the parameter-server strategy has no accumulation.
// expected-error @+1 {{'plan.program' op has accumulation 2: at least 2 micro-shards, and no parameter servers}}
plan.program "m" attributes {batch = 4 : i64, accumulation = 2 : i64, servers = 1 : i64} {
}

// -----

// Tests that only a program with accumulation has final kernels.
plan.program "m" attributes {batch = 4 : i64} {
  %w = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<2xf32>
  %g = plan.grad "w" : memref<2xf32>
  plan.step "train" {
    // expected-error @+1 {{'plan.kernel' op is marked final, which only the train step of a program with accumulation does}}
    plan.kernel "sgd_update" ins(%g : memref<2xf32>) outs(%w : memref<2xf32>) {final, lr = 1.0 : f64}
  }
}

// -----

// Tests that the eval step has no final kernels.
plan.program "m" attributes {batch = 4 : i64, accumulation = 2 : i64} {
  %w = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<2xf32>
  plan.step "eval" {
    %c = plan.alloc : memref<2xf32>
    // expected-error @+1 {{'plan.kernel' op is marked final, which only the train step of a program with accumulation does}}
    plan.kernel "copy" ins(%w : memref<2xf32>) outs(%c : memref<2xf32>) {final}
  }
}

// -----

// Tests that only a program with accumulation sums gradients over micro-shards.
plan.program "m" attributes {batch = 4 : i64} {
  %g = plan.grad "w" : memref<2xf32>
  plan.step "train" {
    %x = plan.alloc : memref<2xf32>
    // expected-error @+1 {{'plan.kernel' op accumulates a gradient, which only the train step of a program with accumulation does}}
    plan.kernel "accumulate" ins(%x : memref<2xf32>) outs(%g : memref<2xf32>) {count = 2 : i64}
  }
}

// -----

// Tests that a sum covers the program's micro-shards.
plan.program "m" attributes {batch = 4 : i64, accumulation = 2 : i64} {
  %g = plan.grad "w" : memref<2xf32>
  plan.step "train" {
    %x = plan.alloc : memref<2xf32>
    // expected-error @+1 {{'plan.kernel' op sums 4 micro-shards, the program 2}}
    plan.kernel "accumulate" ins(%x : memref<2xf32>) outs(%g : memref<2xf32>) {count = 4 : i64}
  }
}

// -----

// Tests that the collectives of a program with accumulation are final: the runtime exchanges a
// bucket once per step, on its last micro-shard.
plan.program "m" attributes {batch = 4 : i64, accumulation = 2 : i64} {
  %b0 = plan.bucket 0 : memref<16xf32>
  plan.step "train" {
    // expected-error @+1 {{'plan.kernel' op is a collective of a step with accumulation, so it must be final}}
    plan.kernel "allreduce_start" ins(%b0 : memref<16xf32>) {bucket = 0 : i64}
  }
}
