//===- TaskIRVerifier.cpp - Structural checks of the task IR --------------===//
#include "ti/IR/TaskIRVerifier.h"

using namespace ti;

bool ti::verifyModule(const tir::Module &m, DiagnosticEngine &diags) {
  unsigned before = diags.errorCount();
  auto checkSlice = [&](const tir::Stage &s, const tir::Slice &slice, const char *role) {
    if (!slice.valid())
      return;
    if (slice.buffer < 0 || static_cast<size_t>(slice.buffer) >= m.buffers.size()) {
      diags.error(s.loc, "stage '" + s.name + "': " + role + " names no buffer");
      return;
    }
    const tir::Buffer &b = m.buffers[slice.buffer];
    // Buffers whose size is set by layout (0 until then) are not checked yet.
    if (b.bytes != 0 &&
        (slice.offset + slice.length) * plan::kActivationBytes > b.bytes &&
        b.kind != plan::BufferKind::KCache && b.kind != plan::BufferKind::VCache)
      diags.error(s.loc, "stage '" + s.name + "': " + role + " [" + llvm::Twine(slice.offset) +
                             ", +" + llvm::Twine(slice.length) + ") is outside buffer '" +
                             b.name + "'");
  };
  for (const tir::Stage &s : m.stages) {
    checkSlice(s, s.input, "input");
    checkSlice(s, s.input2, "input2");
    checkSlice(s, s.input3, "input3");
    checkSlice(s, s.residual, "residual");
    checkSlice(s, s.output, "output");
    checkSlice(s, s.output2, "output2");
    checkSlice(s, s.output3, "output3");
    uint64_t next = 0;
    bool attention =
        s.kind == tir::StageKind::AttentionChunks || s.kind == tir::StageKind::Select;
    for (const tir::Task &t : s.tasks) {
      if (t.worker >= static_cast<int>(m.target.workers))
        diags.error(s.loc, "stage '" + s.name + "': a task is on worker " +
                               llvm::Twine(t.worker) + " of " + llvm::Twine(m.target.workers));
      if (attention)
        continue;
      if (t.rowBegin != next || t.rowEnd <= t.rowBegin)
        diags.error(s.loc, "stage '" + s.name + "': tasks do not tile its units in order");
      next = t.rowEnd;
    }
    if (!attention && !s.tasks.empty() && next != s.units)
      diags.error(s.loc, "stage '" + s.name + "': tasks cover " + llvm::Twine(next) + " of " +
                             llvm::Twine(s.units) + " units");
  }
  return diags.errorCount() == before;
}
