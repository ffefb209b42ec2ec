#pragma once
// A planned step described for profilers (Executor::steps()): the layer and phase it is charged
// to, the primitive kind and implementation oneDNN chose, and each argument's logical and padded
// dimensions as its memory descriptor lays them out.
#include "engine/backend/onednn/plan.h"

namespace ridge::onednn {

StepInfo describe_step(const Plan& p, const Step& s);

}  // namespace ridge::onednn
