//===- Packer.h - A checkpoint into a plan's weights layout -----*- C++ -*-===//
//
// packWeights writes weights.bin (WeightsFile.h) for a plan: every packed
// tensor's segments, in bf16, at the offsets the plan gives, from a Hugging
// Face safetensors checkpoint (SafeTensors.h; bf16, f16 or f32) or from the
// deterministic synthetic weights of RandomWeights.h. Packer.cpp states the
// algorithm.
//
// Output is streamed through bounded buffers (about 130 MiB for any model
// size) and written atomically: a failed or interrupted run leaves
// nothing under the output's name. The output does not depend on the thread
// count.
//
// Thread-safety: packWeights may run concurrently with itself on different
// outputs; it starts and joins its own threads.
//
//===----------------------------------------------------------------------===//
#ifndef TI_WEIGHTS_PACKER_H
#define TI_WEIGHTS_PACKER_H

#include "ti/Plan/Plan.h"
#include "ti/Support/Status.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ti {

struct PackOptions {
  /// A checkpoint directory, index or .safetensors file (SafeTensors.h);
  /// empty when `random` is set.
  std::string checkpoint;
  /// Synthetic weights (RandomWeights.h) with this seed instead.
  bool random = false;
  uint64_t seed = 0;
  /// Threads converting or generating; 0 means one per hardware thread.
  unsigned threads = 0;
  /// Files kept whole after the data (WeightsFile.h): name, contents.
  std::vector<std::pair<std::string, std::string>> attachments;
  /// Output bytes buffered per chunk (two chunks are held); 0 means 32 MiB.
  /// Tests make it small so that tiny models cross chunk boundaries.
  uint64_t chunkBytes = 0;
};

struct PackReport {
  uint64_t tensors = 0;   // Packed tensors written.
  uint64_t bytes = 0;     // The file's bytes, header included.
  double seconds = 0;
  /// One line each, for the user: substitutions made (a tied lm_head), ...
  std::vector<std::string> notes;
};

/// Writes the weights file of `plan` to `outPath`. On failure nothing is left
/// at `outPath` (an existing file there is untouched) and the Status says
/// why; problems with the checkpoint (missing tensors, wrong shapes,
/// unsupported dtypes) are all listed, one per line, before anything is
/// written. `report` may be null.
Status packWeights(const plan::Plan &plan, const PackOptions &opts, const std::string &outPath,
                   PackReport *report);

} // namespace ti

#endif // TI_WEIGHTS_PACKER_H
