//===- SamplerTime.cpp - What the host sampler costs a token --------------===//
//
// ti-sampler-time [VOCAB] [DRAWS]: the median time of Sampler::next over
// DRAWS draws (default 200) from VOCAB logits (default 128,256, Llama 3's),
// drawn from a normal distribution of spread 1 and of spread 8 (a flat and a
// peaked step: how many weights underflow decides what an exponential
// costs), for greedy decoding, a temperature alone (the OpenAI default: no
// cut) and the text mode's common cuts. docs/PERFORMANCE.md, "Serving".
//
//===----------------------------------------------------------------------===//
#include "ti/Runtime/Sampler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  const long vocab = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 128256;
  const long draws = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 200;
  if (vocab < 1 || vocab > (1 << 24) || draws < 1 || draws > 100000) {
    std::fprintf(stderr, "ti-sampler-time: error: VOCAB is 1 to 2^24 and DRAWS 1 to 100,000\n");
    return 2;
  }
  struct Case {
    const char *name;
    ti::SamplingOptions options;
  };
  const Case cases[] = {
      {"greedy", {}},
      {"temperature 0.7", {.temperature = 0.7, .seed = 1}},
      {"temperature 0.8, top-k 40, top-p 0.95", {.temperature = 0.8, .topK = 40, .topP = 0.95, .seed = 1}},
      {"temperature 0.8, top-p 0.95", {.temperature = 0.8, .topP = 0.95, .seed = 1}},
  };
  std::printf("%ld logits, median of %ld draws, ms a draw\n", vocab, draws);
  for (float spread : {1.0f, 8.0f}) {
    std::mt19937 random(7);
    std::normal_distribution<float> normal(0, spread);
    std::vector<float> logits(static_cast<size_t>(vocab));
    for (float &x : logits) x = normal(random);
    for (const Case &c : cases) {
      ti::Sampler sampler(c.options);
      std::vector<double> ms;
      long sum = 0; // Keeps the draws from being optimized away.
      for (long i = 0; i < draws; ++i) {
        const auto start = std::chrono::steady_clock::now();
        sum += sampler.next(logits, {});
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      }
      std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
      std::printf("spread %4.1f  %-40s %8.3f  (token ids sum %ld)\n", spread, c.name, ms[ms.size() / 2], sum);
    }
  }
  return 0;
}
