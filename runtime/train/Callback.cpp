// The list of a run's callbacks; see Callback.h.
#include "runtime/train/Callback.h"

namespace dp::rt {

void CallbackList::onTrainBegin() {
  for (auto &c : list_)
    c->onTrainBegin();
}

void CallbackList::onEpochBegin(int64_t epoch, int64_t steps) {
  for (auto &c : list_)
    c->onEpochBegin(epoch, steps);
}

void CallbackList::onStepEnd(const StepEnd &step) {
  for (auto &c : list_)
    c->onStepEnd(step);
}

bool CallbackList::wantsBoundary(int64_t step) const {
  for (const auto &c : list_)
    if (c->wantsBoundary(step))
      return true;
  return false;
}

bool CallbackList::keepsPlace() const {
  for (const auto &c : list_)
    if (c->keepsPlace())
      return true;
  return false;
}

void CallbackList::onBoundary(const TrainPosition &position, int signal) {
  for (auto &c : list_)
    c->onBoundary(position, signal);
}

void CallbackList::onEpochEnd(EpochStats &epoch) {
  for (auto &c : list_)
    c->onEpochEnd(epoch);
}

void CallbackList::onEvalBegin(int64_t batches) {
  for (auto &c : list_)
    c->onEvalBegin(batches);
}

void CallbackList::onEvalStepEnd(int64_t done, double runningLoss) {
  for (auto &c : list_)
    c->onEvalStepEnd(done, runningLoss);
}

void CallbackList::onEvalEnd(const Evaluation &evaluation) {
  for (auto &c : list_)
    c->onEvalEnd(evaluation);
}

void CallbackList::onTrainEnd() {
  for (auto &c : list_)
    c->onTrainEnd();
}

void CallbackList::onRunEnd() {
  for (auto &c : list_)
    c->onRunEnd();
}

void CallbackList::onStop(Stop &stop) {
  for (auto &c : list_)
    c->onStop(stop);
}

} // namespace dp::rt
