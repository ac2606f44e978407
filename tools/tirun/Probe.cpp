//===- Probe.cpp - tirun probe: measure a GPU, write its target -----------===//
//
//   tirun probe [-o target.json] [--device N] [--name NAME]
//               [--bandwidth-bytes B] [--reps N]
//
// Reads what the compiled worker looks like on the GPU (registers, local
// memory, static shared memory, occupancy at its block size), the GPU's name,
// arch and SM count, what the worker can run there (CudaExecutor::workerLimits:
// query heads per kv head, head dims, shared memory per task, load width),
// measures the streaming-read bandwidth (CudaBandwidth.h), what a hand-off
// through L2 costs (CudaHandOff.h) and what reading a task's input vector
// costs (CudaInputRead.h), takes the worker's fingerprint (a hash of its
// machine code), prints a report, and
// with -o writes the target file that `tic --target-file`
// compiles for, atomically. A plan made from it runs only with this worker
// binary (CudaExecutor::create checks the fingerprint).
//
// Without a GPU, or in a build without CUDA: one error line, exit 1, no file.
//
//===----------------------------------------------------------------------===//
#include "Probe.h"

#include "CommandLine.h"

#ifdef TI_HAVE_CUDA
#include "ti/Runtime/CudaBandwidth.h"
#include "ti/Runtime/CudaExecutor.h"
#include "ti/Runtime/CudaHandOff.h"
#include "ti/Runtime/CudaInputRead.h"
#endif
#include "ti/Support/AtomicFile.h"
#include "ti/Target/Target.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

namespace {

#ifdef TI_HAVE_CUDA
/// "NVIDIA H200" -> "nvidia-h200": lower case, every other run of characters
/// one '-'.
std::string slug(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-')
    out.pop_back();
  return out.empty() ? "gpu" : out;
}
#endif

} // namespace

int ti::tirun::runProbe(int argc, char **argv) {
  CLI::App app{"tirun probe: measures this GPU and the worker on it; with -o, writes the target "
               "file for tic --target-file"};
  app.name("tirun probe");
  std::string output, name;
  int device = 0;
  uint64_t bandwidthBytes = 0;
  int reps = 0;
  app.add_option("-o,--output", output, "write the target (JSON) here ('-': standard output)");
  app.add_option("--device", device, "the CUDA device (default 0)")->check(CLI::NonNegativeNumber);
  app.add_option("--name", name, "the target's name (default: the GPU's name, as nvidia-h200)");
  app.add_option("--bandwidth-bytes", bandwidthBytes,
                 "the buffer the bandwidth test reads (default 2.5 GiB; 512MiB, 4GB, ...)")
      ->transform(CLI::AsSizeValue(/*kb_is_1000=*/true));
  app.add_option("--reps", reps, "timed reads of the buffer; the median counts (default 20)")
      ->check(CLI::Range(1, 10000));
  if (auto exit = parseCommandLine(app, argc, argv))
    return *exit;

#ifndef TI_HAVE_CUDA
  return fail("probe needs an NVIDIA GPU: this tirun was built without CUDA (configure with "
              "-DTI_ENABLE_CUDA=ON)");
#else
  auto info = CudaExecutor::deviceInfo(device);
  if (!info)
    return fail("probe needs an NVIDIA GPU: " + info.status().message());
  // The worker's execution model for this GPU: the stream worker where the
  // bulk-copy engine is (sm_90), the plain one elsewhere (ti/Plan/Execution.h).
  const plan::ExecutionModel model =
      info->arch == plan::kStreamArch ? plan::ExecutionModel::Stream : plan::ExecutionModel::Plain;
  const uint32_t threads = plan::blockThreads(model);
  auto attributes = CudaExecutor::workerAttributes(device, 0, model);
  if (!attributes)
    return fail(attributes.status().message());
  auto image = CudaExecutor::workerImage(device, model);
  if (!image)
    return fail(image.status().message());
  const std::string fingerprint = CudaExecutor::kernelFingerprint(device, *image);
  if (fingerprint.empty())
    return fail("cannot compute the worker's fingerprint on GPU " + std::to_string(device));
  BandwidthOptions options;
  if (bandwidthBytes)
    options.bytes = bandwidthBytes;
  if (reps)
    options.repetitions = reps;
  auto bandwidth = measureStreamingBandwidth(device, options);
  if (!bandwidth)
    return fail(bandwidth.status().message());
  // Two measurements the report shows and the target does not hold: a
  // failure of either is a line of the report, not the probe's.
  auto handOff = measureHandOff(device, HandOffOptions{});
  auto inputRead = measureInputRead(device, InputReadOptions{});

  // The report goes to standard error when the target goes to standard output.
  FILE *out = output == "-" ? stderr : stdout;
  const double MiB = 1024.0 * 1024.0;
  std::fprintf(out, "gpu %d         %s, %s, %d SMs, %.0f MiB L2, %.1f GiB\n", device,
               info->name.c_str(), info->arch.c_str(), info->smCount, info->l2Bytes / MiB,
               info->memoryBytes / MiB / 1024.0);
  std::fprintf(out, "worker        %s %s, %u threads per block\n",
               plan::executionModelName(model), image->describe().c_str(), threads);
  std::fprintf(out, "  registers   %d per thread (at most %d for %u threads on an SM)\n",
               attributes->registers, info->registersPerSm / int(threads), threads);
  std::fprintf(out, "  local       %zu bytes per thread (stack frame and spills)\n",
               attributes->localBytes);
  std::fprintf(out, "  shared      %zu bytes static per block; up to %zu dynamic\n",
               attributes->staticSharedBytes,
               info->sharedPerBlockOptin -
                   std::min(info->sharedPerBlockOptin, attributes->staticSharedBytes));
  std::fprintf(out, "  occupancy   %d block(s) of %u threads per SM (no dynamic shared memory)\n",
               attributes->blocksPerSm, threads);
  std::fprintf(out,
               "bandwidth     %.1f GB/s median, min %.1f, max %.1f (%d reads of %.2f GB, %.0fx "
               "L2)\n",
               bandwidth->medianGBs, bandwidth->minGBs, bandwidth->maxGBs, bandwidth->repetitions,
               bandwidth->bytes / 1e9,
               bandwidth->l2Bytes ? double(bandwidth->bytes) / double(bandwidth->l2Bytes) : 0.0);
  if (!handOff)
    std::fprintf(out, "hand-off      not measured: %s\n", handOff.status().message().c_str());
  else
    std::fprintf(out,
                 "hand-off      %.2f us idle, %.2f with the other SMs streaming (%.0f GB/s), %.2f "
                 "with every SM streaming (%.0f GB/s) (a relaxed store seen by another SM's polls, "
                 "one way; median of %d pairs of SMs)\n",
                 handOff->idleNs / 1e3, handOff->othersStreamNs / 1e3, handOff->othersStreamGBs,
                 handOff->allStreamNs / 1e3, handOff->allStreamGBs, handOff->pairs);
  if (handOff && handOff->bulkMeasured)
    std::fprintf(out,
                 "  bulk copies %.2f us with the other SMs bulk-copying (%.0f GB/s), %.2f with every "
                 "SM bulk-copying (%.0f GB/s) (one thread an SM, its copies in flight into shared "
                 "memory)\n",
                 handOff->othersBulkNs / 1e3, handOff->othersBulkGBs, handOff->allBulkNs / 1e3,
                 handOff->allBulkGBs);
  if (!inputRead)
    std::fprintf(out, "input read   not measured: %s\n", inputRead.status().message().c_str());
  for (const InputReadResult &r : inputRead ? *inputRead : std::vector<InputReadResult>{}) {
    std::fprintf(out,
                 "input read   K = %5u: %.2f us in rounds of 4 pairs a thread, %.2f with two "
                 "rounds in flight, %.2f with 16 pairs in flight, %.2f by one SM alone",
                 r.length, r.roundsNs / 1e3, r.pipelinedNs / 1e3, r.batchedNs / 1e3,
                 r.aloneNs / 1e3);
    std::fprintf(out, " (every SM reading the same tagged vector from L2, 256 threads an SM; "
                      "medians)\n");
    if (r.copiesMeasured)
      std::fprintf(out,
                   "  behind copies %.2f us in rounds (%.0f GB/s), %.2f with 16 pairs in flight "
                   "(%.0f GB/s), %.2f for one SM while the others copy (%.0f GB/s), %.2f for one "
                   "SM while it alone copies (%.0f GB/s) (one thread an SM keeping bulk copies "
                   "in flight into shared memory)\n",
                   r.copyingNs / 1e3, r.copyingGBs, r.copyingBatchedNs / 1e3, r.copyingBatchedGBs,
                   r.othersCopyingNs / 1e3, r.othersCopyingGBs, r.ownCopyingNs / 1e3,
                   r.ownCopyingGBs);
  }
  const plan::WorkerLimits limits = CudaExecutor::workerLimits(info->sharedPerBlockOptin, model);
  std::string dims;
  for (uint32_t d : limits.headDims)
    dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  std::fprintf(out, "  runs        up to %u query heads per kv head, head_dim %s, %u bytes of "
               "shared memory per task, columns in multiples of %u\n",
               limits.maxGroup, dims.c_str(), limits.sharedBytes, limits.vectorElements);
  std::fprintf(out, "fingerprint   %s\n", fingerprint.c_str());
  std::fflush(out);
  if (attributes->blocksPerSm < 1)
    return fail("the worker cannot run one " + std::to_string(threads) +
                "-thread block per SM of GPU " + std::to_string(device));
  if (output.empty())
    return 0;

  // The planning choices that are not measured are Target's defaults and the
  // execution model's (withExecution), which are the built-in h200 target's
  // (test/unit/Target/TargetTest.cpp).
  Target t = Target().withExecution(model);
  t.name = name.empty() ? slug(info->name) : name;
  t.gpu = info->name;
  t.arch = info->arch;
  t.workers = static_cast<uint32_t>(info->smCount);
  // The stream worker's budget is what its consumers hold after the
  // producer's registers are moved to them (withExecution); the plain one's
  // the SM's registers over its block.
  if (model == plan::ExecutionModel::Plain)
    t.maxRegisters = std::min<uint32_t>(uint32_t(info->registersPerSm) / threads, 255);
  t.bandwidthGBs = std::round(bandwidth->medianGBs * 10) / 10;
  t.workerFingerprint = fingerprint;
  t.maxQueryHeadsPerKvHead = limits.maxGroup;
  t.headDims = limits.headDims;
  t.sharedBytesPerWorker = limits.sharedBytes;
  t.vectorElements = limits.vectorElements;
  const std::string json = targetToJson(t);
  // What tic will read back must be a valid target.
  if (auto back = parseTargetJson(json, "the probed target"); !back)
    return fail(back.status().message());
  if (std::string e = writeFileAtomically(output, json); !e.empty())
    return fail(e);
  if (output != "-")
    std::fprintf(stderr, "tirun: wrote %s (target '%s')\n", output.c_str(), t.name.c_str());
  return 0;
#endif
}
