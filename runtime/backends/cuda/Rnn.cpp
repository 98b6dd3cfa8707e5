// The cuDNN LSTM adapter's checks; see Rnn.h.
#include "runtime/backends/cuda/Rnn.h"

#include <algorithm>
#include <climits>
#include <vector>

namespace dp::rt::cuda {

std::string rnnProblem(const contract::LstmShape &s) {
  for (int64_t v : {s.n, s.t, s.f, s.u})
    if (v > INT_MAX)
      return "a size of " + std::to_string(v) + " exceeds cuDNN's 32-bit RNN descriptors";
  return {};
}

std::string rnnLayoutProblem(const RnnWeightLayout &layout, int64_t f, int64_t u,
                             int64_t spaceElements) {
  struct Piece {
    int64_t begin, size;
    std::string name;
  };
  static const char *gates[] = {"i", "f", "c", "o"};
  std::vector<Piece> pieces;
  for (int g = 0; g < 4; ++g) {
    pieces.push_back({layout.input[g], u * f, std::string("gate ") + gates[g] + "'s input matrix"});
    pieces.push_back(
        {layout.recurrent[g], u * u, std::string("gate ") + gates[g] + "'s recurrent matrix"});
    pieces.push_back({layout.bias[g], u, std::string("gate ") + gates[g] + "'s bias"});
  }
  for (const Piece &p : pieces)
    if (p.begin < 0 || p.begin + p.size > spaceElements)
      return p.name + " (elements " + std::to_string(p.begin) + " to " +
             std::to_string(p.begin + p.size) + ") lies outside the weight space of " +
             std::to_string(spaceElements);
  std::sort(pieces.begin(), pieces.end(),
            [](const Piece &a, const Piece &b) { return a.begin < b.begin; });
  for (size_t i = 1; i < pieces.size(); ++i)
    if (pieces[i].begin < pieces[i - 1].begin + pieces[i - 1].size)
      return pieces[i - 1].name + " and " + pieces[i].name + " overlap";
  return {};
}

} // namespace dp::rt::cuda
