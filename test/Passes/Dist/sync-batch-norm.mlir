// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-sync-batch-norm -dist-insert-allreduce | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce | FileCheck %s --check-prefix=LOCAL
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate -dist-split-batch -dist-sync-batch-norm | FileCheck %s --check-prefix=ONE
// RUN: dp-opt %s -dp-compile="devices-per-process=2" | FileCheck %s --check-prefix=PLAN

// Tests that with 2 replicas the shards' batch moments are averaged right after the last
// replica computes them and every use (normalisation, moving averages) reads the means; that
// the sums of batch_norm_grad_params are averaged before the input gradient and serve as
// gamma's and beta's averaged gradients, which dist-insert-allreduce then leaves alone.
// CHECK-LABEL: func.func @train(
// CHECK: %[[S0:.*]] = graph.batch_moments {{.*}}dist.replica = 0{{.*}} -> tensor<2x3xf32>
// CHECK-NEXT: %[[S1:.*]] = graph.batch_moments {{.*}}dist.replica = 1{{.*}} -> tensor<2x3xf32>
// CHECK-NEXT: %[[M:.*]]:2 = dist.allreduce %[[S0]], %[[S1]] {dist.sync, replicas = 2 : i64, tensors = ["bn.batch_stats"]}
// CHECK-NEXT: graph.batch_norm_train %{{.*}}, %[[M]]#0,
// CHECK-NEXT: graph.batch_norm_train %{{.*}}, %[[M]]#1,
// CHECK-NEXT: graph.moving_stats_update %{{.*}}, %{{.*}}, %[[M]]#0
// CHECK-NEXT: graph.moving_stats_update %{{.*}}, %{{.*}}, %[[M]]#1
// CHECK: %[[G0:.*]], %[[B0:.*]] = graph.batch_norm_grad_params
// CHECK-NEXT: %[[G1:.*]], %[[B1:.*]] = graph.batch_norm_grad_params
// CHECK-NEXT: %[[P:.*]]:4 = dist.allreduce %[[G0]], %[[B0]], %[[G1]], %[[B1]] {dist.sync, replicas = 2 : i64, tensors = ["bn.gamma", "bn.beta"]}
// CHECK-NEXT: graph.batch_norm_grad_input %{{.*}}, %[[M]]#0, %{{.*}}, %[[P]]#0, %[[P]]#1,
// CHECK-NEXT: graph.batch_norm_grad_input %{{.*}}, %[[M]]#1, %{{.*}}, %[[P]]#2, %[[P]]#3,
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[P]]#0
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[P]]#2
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[P]]#1
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[P]]#3
// CHECK: dist.allreduce {{.*}} {replicas = 2 : i64, tensors = ["dense1.kernel"]}
// CHECK-NOT: dist.allreduce
// CHECK: return

// Tests that without the pass each replica keeps its shard's statistics (only gradients are
// averaged, gamma's and beta's included).
// LOCAL-LABEL: func.func @train(
// LOCAL-NOT: dist.sync
// LOCAL: dist.allreduce {{.*}} tensors = ["bn.gamma"]
// LOCAL: dist.allreduce {{.*}} tensors = ["bn.beta"]
// LOCAL: dist.allreduce {{.*}} tensors = ["dense1.kernel"]

// Tests that one replica needs no averaging.
// ONE-LABEL: func.func @train(
// ONE-NOT: dist.allreduce

// Tests the lowering: the statistics live in a bucket of their own, as a plan.grad named after
// the layer, reduced (start, then wait) before the normalisation reads them; the averaged
// gamma and beta gradients share a second bucket before the input gradient.
// PLAN: %[[SB:.*]] = plan.bucket 0
// PLAN: plan.grad "bn.batch_stats" in %[[SB]]
// PLAN: %[[GB:.*]] = plan.bucket 1
// PLAN: plan.grad "bn.gamma" in %[[GB]]
// PLAN: plan.grad "bn.beta" in %[[GB]]
// PLAN-LABEL: plan.step "train"
// PLAN: plan.kernel "batch_moments"
// PLAN: plan.kernel "batch_moments"
// PLAN: plan.kernel "allreduce_start" {{.*}}bucket = 0
// PLAN: plan.kernel "allreduce_wait" {{.*}}bucket = 0
// PLAN: plan.kernel "batch_norm_train"
// PLAN: plan.kernel "batch_norm_grad_params"
// PLAN: plan.kernel "batch_norm_grad_params"
// PLAN: plan.kernel "allreduce_start" {{.*}}bucket = 1
// PLAN: plan.kernel "allreduce_wait" {{.*}}bucket = 1
// PLAN: plan.kernel "batch_norm_grad_input"
func.func @bn(%x: tensor<4x6xf32> {graph.input = "image"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<6x3xf32>
  %h = graph.dense %x, %w : (tensor<4x6xf32>, tensor<6x3xf32>) -> tensor<4x3xf32>
  %g = graph.param "bn.gamma" {init = #graph.ones} : tensor<3xf32>
  %b = graph.param "bn.beta" {init = #graph.zeros} : tensor<3xf32>
  %m = graph.param "bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<3xf32>
  %v = graph.param "bn.moving_variance" {init = #graph.ones, trainable = false} : tensor<3xf32>
  %y = graph.batch_norm %h, %g, %b, %m, %v : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
