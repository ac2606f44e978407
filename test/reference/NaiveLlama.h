//===- NaiveLlama.h - Reference forward pass of a Llama decoder -*- C++ -*-===//
//
// An oracle for the runtime's executors: a batch-one, token-at-a-time forward
// pass of a Llama 3.x decoder, written straight from the model's math (the way
// Hugging Face's LlamaForCausalLM computes it) in double precision. It shares
// no code with the compiler, the plan or the runtime on purpose, so a mistake
// there cannot hide by being repeated here. Clarity beats speed: every loop is
// the plain formula. The weight matrices are held as the floats the checkpoint
// gives (4 bytes a parameter: Llama 3.2 1B takes 5 GB), every product and sum
// is double.
//
// Exactly one deliberate departure from pure double: by default each K and V
// row is rounded to bfloat16 as it enters the cache, because the runtime under
// test stores its cache in bfloat16 (see NaiveLlama::step).
//
// Depends on the C++ standard library only.
//
//===----------------------------------------------------------------------===//
#ifndef TI_TEST_REFERENCE_NAIVELLAMA_H
#define TI_TEST_REFERENCE_NAIVELLAMA_H

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace ti::reference {

/// The hyperparameters of a Llama-family decoder, named after (and with the
/// meaning of) the fields of Hugging Face's LlamaConfig. The defaults are Llama
/// 3.1's; the dimensions have none.
struct LlamaConfig {
  int vocab = 0;   ///< vocab_size
  int hidden = 0;  ///< hidden_size
  int ffn = 0;     ///< intermediate_size
  int layers = 0;  ///< num_hidden_layers
  int heads = 0;   ///< num_attention_heads
  int kvHeads = 0; ///< num_key_value_heads; must divide heads
  int headDim = 0; ///< head_dim; must be even (RoPE rotates pairs)
  double rmsEps = 1e-5;
  double ropeTheta = 500000.0;
  /// rope_scaling.rope_type == "llama3" and its parameters.
  bool llama3Scaling = false;
  double ropeFactor = 8.0;
  double lowFreqFactor = 1.0;
  double highFreqFactor = 4.0;
  int originalContext = 8192; ///< original_max_position_embeddings
  /// tie_word_embeddings: the lm_head is the embedding matrix.
  bool tiedEmbeddings = false;

  /// A layer's attention shape.
  struct AttentionShape {
    int heads = 0, kvHeads = 0, headDim = 0;
  };
  /// Per-layer attention shapes, for models whose layers differ (layers of
  /// them); empty: every layer has heads, kvHeads and headDim above.
  std::vector<AttentionShape> layerShapes;
  /// Layer `layer`'s attention shape.
  AttentionShape shapeOf(int layer) const {
    return layerShapes.empty() ? AttentionShape{heads, kvHeads, headDim} : layerShapes[layer];
  }
};

/// Returns the values of the checkpoint tensor called \p checkpointName
/// (Hugging Face names, e.g. "model.layers.0.self_attn.q_proj.weight"),
/// row-major. Linear weights are [out, in]: y = W x.
using WeightFn =
    std::function<std::vector<float>(const std::string &checkpointName)>;

/// A Llama decoder with its K/V cache, fed one token at a time.
///
/// Owns a copy of every weight (as double) and its cache; the weight callback
/// is used only inside the constructor. Not thread-safe: step() mutates the
/// cache; distinct instances are independent.
class NaiveLlama {
public:
  /// Loads every weight through \p weights once. Throws std::invalid_argument
  /// on an inconsistent config or a tensor of the wrong size. \p bf16KvCache
  /// selects the cache's precision (see step()).
  NaiveLlama(LlamaConfig config, WeightFn weights, bool bf16KvCache = true);

  /// Feeds \p token at position position() and returns the logits for the
  /// next token (vocab values); the position then advances by one. Throws
  /// std::out_of_range for a token outside [0, vocab).
  std::vector<double> step(int token);

  /// The position the next step() will use: the number of tokens fed since
  /// construction or the last reset().
  int position() const { return pos; }

  /// Empties the K/V cache; the next step() is at position 0 again.
  void reset();

  const LlamaConfig &config() const { return cfg; }
  bool bf16KvCache() const { return roundCache; }

  /// The index of the largest logit, the lowest such index on ties; -1 when
  /// \p logits is empty.
  static int argmax(const std::vector<double> &logits);

  /// RoPE's inverse frequencies, headDim / 2 of them: theta^(-2i/headDim),
  /// adjusted by Llama 3 frequency scaling when the config enables it (the
  /// config's headDim unless another is given).
  static std::vector<double> ropeInverseFrequencies(const LlamaConfig &config,
                                                    int headDim = 0);

  /// Rotates one head's vector in place for \p position, pairing element i
  /// with element i + d/2 ("rotate half", as Hugging Face does).
  /// \p invFreq has d/2 entries.
  static void applyRope(std::span<double> head, int position,
                        const std::vector<double> &invFreq);

  /// \p value rounded to the nearest bfloat16, ties to even; overflow gives
  /// infinity and NaN stays NaN.
  static double roundToBf16(double value);

private:
  /// A row-major [rows, cols] matrix, as the checkpoint's floats.
  struct Matrix {
    int rows = 0;
    int cols = 0;
    std::vector<float> values;
  };

  struct Layer {
    LlamaConfig::AttentionShape shape;
    std::vector<double> invFreq; // RoPE's, for this layer's head_dim.
    std::vector<double> inputNorm;
    Matrix q, k, v, o;
    std::vector<double> postAttentionNorm;
    Matrix gate, up, down;
    /// One row of kvHeads * headDim values per position fed so far; K rows
    /// are stored after RoPE.
    std::vector<std::vector<double>> keys;
    std::vector<std::vector<double>> values;
  };

  static std::vector<double> matVec(const Matrix &w,
                                    const std::vector<double> &x);
  std::vector<double> rmsNorm(const std::vector<double> &x,
                              const std::vector<double> &weight) const;
  std::vector<double> attention(Layer &layer, const std::vector<double> &h);
  std::vector<double> mlp(const Layer &layer,
                          const std::vector<double> &g) const;

  LlamaConfig cfg;
  bool roundCache;
  Matrix embedding;
  std::vector<Layer> layerWeights;
  std::vector<double> finalNorm;
  Matrix lmHead; ///< Empty when the embeddings are tied.
  int pos = 0;
};

} // namespace ti::reference

#endif // TI_TEST_REFERENCE_NAIVELLAMA_H
