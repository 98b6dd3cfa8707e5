#!/usr/bin/env python3
"""TensorFlow (Keras 3, CPU) peer for dp's benchmarks: the seed models of models/*.mlir.

The same models, data, batches, optimizers and timing boundaries as torch_peer.py (see its
header and bench/README.md), built the way a Keras user writes them: keras.Sequential with
Conv2D / MaxPooling2D / Flatten / Dropout / Dense / LSTM layers and their default initialisers
(glorot_uniform kernels, zero biases; LSTM: orthogonal recurrent kernel, unit forget bias,
`dropout=` on the layer's inputs), images NHWC 28x28x1, the output layer without softmax and
SparseCategoricalCrossentropy(from_logits=True) (mean over the batch), Adam/SGD from
keras.optimizers, fp32. Training is `model.fit` (Keras's compiled train step: a tf.function,
no XLA, which is Keras's default on a CPU-only machine) on a tf.data pipeline that draws a
fresh seeded permutation of the training indices every epoch, cuts it into full batches only
(drop_remainder: the left-over samples are skipped, as dprun does), gathers each batch from the
in-memory arrays and prefetches (as Keras's own numpy-array adapter does).

Threads: tf.config.threading intra-op and inter-op pools both set to --threads (default: all
cores). TensorFlow's oneDNN kernels are on (its default on x86-64 Linux).

Timing: whole epochs, wall clock (time.perf_counter) from Keras's on_epoch_begin to
on_epoch_end callbacks: the shuffle, gather, forward, loss, backward, update and the train
metrics (loss and accuracy). Epoch 1 includes tracing the train step (a warm-up, as for the
others); data loading, model building and the test evaluation are outside.

Prints exactly one JSON line on stdout at the end (anything else goes to stderr).
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import common  # noqa: E402

ap, args = common.parse_args(__doc__)

import tensorflow as tf  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(args.threads)
tf.config.threading.set_inter_op_parallelism_threads(args.threads)

import keras  # noqa: E402
from keras import layers  # noqa: E402


def build(name):
    if name == "mnist_mlp":
        return keras.Sequential([
            keras.Input((784,)),
            layers.Dense(100, activation="sigmoid"),
            layers.Dense(10)])
    if name == "mnist_small_cnn":
        return keras.Sequential([
            keras.Input((28, 28, 1)),
            layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(2),
            layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(2),
            layers.Flatten(),
            layers.Dense(64, activation="relu"),
            layers.Dense(10)])
    if name == "mnist_cnn":
        return keras.Sequential([
            keras.Input((28, 28, 1)),
            layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(2),
            layers.Conv2D(128, 3, activation="relu"), layers.MaxPooling2D(2),
            layers.Conv2D(256, 3, activation="relu"), layers.MaxPooling2D(2),
            layers.Flatten(),
            layers.Dropout(0.5),
            layers.Dense(1000, activation="relu"),
            layers.Dense(100, activation="relu"),
            layers.Dense(10)])
    if name == "mnist_lstm":
        return keras.Sequential([
            keras.Input((28, 28)),
            layers.LSTM(256, return_sequences=True),
            layers.LSTM(256, dropout=0.2, return_sequences=True),
            layers.LSTM(256, dropout=0.2),
            layers.Dense(256, activation="relu"), layers.Dropout(0.2),
            layers.Dense(256, activation="relu"), layers.Dropout(0.2),
            layers.Dense(10)])
    if name == "resnet50v2_32":
        return keras.applications.ResNet50V2(weights=None, input_shape=(32, 32, 3), classes=10,
                                             classifier_activation=None)
    raise ValueError(name)


VIEWS = {"flat": (784,), "image": (28, 28, 1), "sequence": (28, 28), "cifar": (32, 32, 3)}


class EpochTimer(keras.callbacks.Callback):
    def __init__(self, steps, batch):
        super().__init__()
        self.steps, self.batch, self.epochs = steps, batch, []

    def on_epoch_begin(self, epoch, logs=None):
        self.t0, self.c0 = time.perf_counter(), time.process_time()

    def on_epoch_end(self, epoch, logs=None):
        sec = time.perf_counter() - self.t0
        cpu = time.process_time() - self.c0
        logs = logs or {}
        seen = self.steps * self.batch
        loss = float(logs.get("loss", float("nan")))
        acc = float(logs.get("sparse_categorical_accuracy", float("nan")))
        self.epochs.append({"epoch": epoch + 1, "loss": loss, "train_accuracy": acc,
                            "seconds": sec, "samples": seen, "samples_per_sec": seen / sec,
                            "steps": self.steps, "ms_per_step": 1e3 * sec / self.steps,
                            "cpu_seconds": cpu})
        print(f"epoch {epoch + 1}: loss {loss:.4f} acc {acc:.4f} {sec:.3f}s "
              f"{seen / sec:.0f} samples/s {1e3 * sec / self.steps:.2f} ms/step "
              f"({cpu / sec:.2f} cores busy)", file=sys.stderr)


def main():
    spec = common.MODELS[args.model]
    keras.utils.set_random_seed(args.seed)
    rss_import_mb = common.vm_hwm_mb()

    shape = VIEWS[spec["input"]]
    x_train, y_train = common.load_data(args.data, args.model, "train")
    x_test, y_test = common.load_data(args.data, args.model, "t10k")
    x_train = x_train.reshape((-1,) + shape)
    x_test = x_test.reshape((-1,) + shape)
    n = x_train.shape[0]
    steps = common.steps_per_epoch(ap, n, args)
    xt = tf.constant(x_train)
    yt = tf.constant(y_train)
    del x_train, y_train
    ds = (tf.data.Dataset.range(n)
          .shuffle(n, seed=args.seed, reshuffle_each_iteration=True)
          .batch(args.batch, drop_remainder=True)
          .take(steps)
          .map(lambda i: (tf.gather(xt, i), tf.gather(yt, i)))
          .prefetch(tf.data.AUTOTUNE))
    rss_data_mb = common.vm_hwm_mb()

    if args.precision == "bf16":
        # Keras's mixed precision: layers compute in bfloat16, variables stay float32.
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
    model = build(args.model)
    n_params = int(sum(int(tf.size(w)) for w in model.trainable_weights))
    print(f"{args.model}: {n_params:,} trainable parameters", file=sys.stderr)
    common.check_params(args.model, n_params)
    if args.optimizer == "sgd":
        opt = keras.optimizers.SGD(learning_rate=args.lr)
    else:
        opt = keras.optimizers.Adam(learning_rate=args.lr, beta_1=common.ADAM["beta1"],
                                    beta_2=common.ADAM["beta2"], epsilon=common.ADAM["eps"])
    model.compile(optimizer=opt,
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=[keras.metrics.SparseCategoricalAccuracy()])
    timer = EpochTimer(steps, args.batch)
    model.fit(ds, epochs=args.epochs, verbose=0, shuffle=False, callbacks=[timer])

    ev_batch = x_test.shape[0] if args.model == "mnist_mlp" else common.EVAL_BATCH
    logits = model.predict(x_test, batch_size=ev_batch, verbose=0)
    test_acc = float((logits.argmax(1) == y_test).mean())

    epochs = timer.epochs
    total_seconds = sum(e["seconds"] for e in epochs)
    total_samples = sum(e["samples"] for e in epochs)
    print(json.dumps({
        "framework": "tensorflow",
        "version": tf.__version__,
        "keras_version": keras.__version__,
        "model": args.model,
        "precision": args.precision,
        "params": n_params,
        "samples_per_sec": total_samples / total_seconds if total_seconds > 0 else 0.0,
        "seconds": total_seconds,
        "steps": steps * len(epochs),
        "samples": total_samples,
        "test_accuracy": test_acc,
        "peak_rss_mb": common.vm_hwm_mb(),
        "rss_after_import_mb": rss_import_mb,
        "rss_after_data_mb": rss_data_mb,
        "threads": args.threads,
        "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),
        "inter_op_threads": tf.config.threading.get_inter_op_parallelism_threads(),
        "batch": args.batch,
        "optimizer": args.optimizer,
        "lr": args.lr,
        "seed": args.seed,
        "epochs": epochs,
    }))


if __name__ == "__main__":
    main()
