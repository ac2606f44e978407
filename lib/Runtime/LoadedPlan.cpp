//===- LoadedPlan.cpp - A plan and its weights, checked -------------------===//
#include "ti/Runtime/LoadedPlan.h"

#include "ti/Plan/PlanFile.h"
#include "ti/Plan/PlanVerifier.h"

using namespace ti;

SelectParams LoadedPlan::selectParams() const {
  SelectParams p{};
  p.maxContext = static_cast<int32_t>(plan.model.maxContext);
  p.eosCount = 0;
  for (int32_t id : plan.model.eos) // The verifier allowed kMaxEndTokens at most.
    if (p.eosCount < int32_t(plan::kMaxEndTokens))
      p.eos[p.eosCount++] = id;
  return p;
}

StatusOr<std::shared_ptr<const LoadedPlan>> ti::loadPlan(plan::Plan planValue,
                                                         std::unique_ptr<WeightsFile> weights) {
  if (Status s = plan::verifyPlan(planValue); !s.ok())
    return Status::error("the plan does not verify: " + s.message());
  for (plan::BufferKind kind : {plan::BufferKind::Prompt, plan::BufferKind::StepState,
                                plan::BufferKind::Logits, plan::BufferKind::Candidates,
                                plan::BufferKind::TokenSlots})
    if (!planValue.findBuffer(kind))
      return Status::error(std::string("the plan has no ") + plan::bufferKindName(kind) +
                           " buffer: it is not a decode plan");
  if (Status s = weights->checkAgainst(planValue); !s.ok())
    return s;
  auto lp = std::make_shared<LoadedPlan>();
  lp->plan = std::move(planValue);
  lp->weights = std::move(weights);
  const plan::Plan &p = lp->plan;
  lp->waveTasks.resize(p.waves.size());
  for (uint32_t i = 0; i < p.tasks.size(); ++i)
    lp->waveTasks[p.tasks[i].wave].push_back(i);
  // Checked above; the verifier guarantees there is at most one of each.
  lp->promptOffset = p.findBuffer(plan::BufferKind::Prompt)->offset;
  lp->stepStateOffset = p.findBuffer(plan::BufferKind::StepState)->offset;
  lp->logitsOffset = p.findBuffer(plan::BufferKind::Logits)->offset;
  return std::shared_ptr<const LoadedPlan>(std::move(lp));
}

StatusOr<std::shared_ptr<const LoadedPlan>> ti::loadPlan(const std::string &planPath,
                                                         const std::string &weightsPath,
                                                         bool verifyWeights) {
  auto p = plan::readPlanFile(planPath);
  if (!p) {
    const std::string &m = p.status().message();
    // Name the file unless the message already does.
    if (m.find(planPath) != std::string::npos)
      return p.status();
    return Status::error("'" + planPath + "': " + m);
  }
  auto w = WeightsFile::open(weightsPath);
  if (!w)
    return w.status();
  if (verifyWeights)
    if (Status s = (*w)->verifyPayload(); !s.ok())
      return s;
  auto lp = loadPlan(std::move(*p), std::move(*w));
  if (!lp)
    return Status::error("'" + planPath + "': " + lp.status().message());
  return lp;
}
