//===- GraphVerifierTest.cpp - The verifier on graphs built in memory ------===//
#include "ti/IR/GraphVerifier.h"

#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

using namespace ti;

namespace {

TensorType type(DType dtype, std::initializer_list<int64_t> shape) {
  TensorType t;
  t.dtype = dtype;
  t.shape.assign(shape.begin(), shape.end());
  return t;
}

Operand value(unsigned i) { return Operand{Operand::Kind::Value, i, {}}; }
Operand weight(unsigned i) { return Operand{Operand::Kind::Weight, i, {}}; }

/// token -> embed -> matmul -> argmax, all valid.
Graph validGraph() {
  Graph g;
  g.name = "g";
  g.values.push_back(Value{"token", type(DType::I32, {1}), -1, {}});
  g.inputs.push_back(0);
  g.weights.push_back(Weight{"e", "embed", type(DType::BF16, {16, 8}), -1, {}});
  g.weights.push_back(Weight{"w", "w", type(DType::BF16, {4, 8}), -1, {}});

  auto addOp = [&](OpKind kind, std::vector<Operand> operands, TensorType result,
                   std::string name) {
    Op op;
    op.kind = kind;
    op.operands = std::move(operands);
    op.result = g.values.size();
    g.values.push_back(Value{std::move(name), result, static_cast<int>(g.ops.size()), {}});
    g.ops.push_back(std::move(op));
  };
  addOp(OpKind::Embed, {weight(0), value(0)}, type(DType::F32, {8}), "x");
  addOp(OpKind::MatMul, {value(1), weight(1)}, type(DType::F32, {4}), "y");
  addOp(OpKind::Argmax, {value(2)}, type(DType::I32, {1}), "next");
  g.outputs = {2, 3};
  return g;
}

struct Verify {
  explicit Verify(const Graph &g) : os(text), diags(sm, os) { ok = verifyGraph(g, diags); os.flush(); }
  llvm::SourceMgr sm;
  std::string text;
  llvm::raw_string_ostream os;
  DiagnosticEngine diags;
  bool ok;
};

TEST(GraphVerifier, AcceptsAValidGraph) {
  Verify v(validGraph());
  EXPECT_TRUE(v.ok) << v.text;
  EXPECT_TRUE(v.text.empty());
}

TEST(GraphVerifier, RejectsUseBeforeDefinition) {
  Graph g = validGraph();
  std::swap(g.ops[0], g.ops[1]); // matmul now runs before the embed it reads.
  g.values[1].definingOp = 1;
  g.values[2].definingOp = 0;
  Verify v(g);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.text.find("error: 'x' is used before it is defined"), std::string::npos) << v.text;
}

TEST(GraphVerifier, RejectsAWrongResultType) {
  Graph g = validGraph();
  g.values[2].type = type(DType::F32, {5});
  Verify v(g);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.text.find("'y' is declared f32[5] but 'matmul' produces f32[4]"), std::string::npos)
      << v.text;
}

TEST(GraphVerifier, RejectsAShapeMismatch) {
  Graph g = validGraph();
  g.weights[1].type = type(DType::BF16, {4, 9});
  Verify v(g);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.text.find("shape mismatch in 'matmul'"), std::string::npos) << v.text;
}

TEST(GraphVerifier, RejectsADuplicateCheckpointTensor) {
  Graph g = validGraph();
  g.weights[1].checkpoint = "embed";
  Verify v(g);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.text.find("checkpoint tensor \"embed\" is loaded twice"), std::string::npos) << v.text;
}

TEST(GraphVerifier, RejectsDuplicateValueNames) {
  Graph g = validGraph();
  g.values[3].name = "x";
  Verify v(g);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.text.find("value name 'x' is not unique"), std::string::npos) << v.text;
}

TEST(GraphVerifier, RejectsAComputedTokenId) {
  Graph g = validGraph();
  // Feed argmax's result back into a second embed: the token must be an input.
  Op op;
  op.kind = OpKind::Embed;
  op.operands = {weight(0), value(3)};
  op.result = g.values.size();
  g.values.push_back(Value{"x2", type(DType::F32, {8}), static_cast<int>(g.ops.size()), {}});
  g.ops.push_back(op);
  Verify v(g);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.text.find("the token id of 'embed' must be a graph input, not the computed value 'next'"),
            std::string::npos)
      << v.text;
}

TEST(GraphVerifier, RejectsOutOfRangeOperands) {
  Graph g = validGraph();
  g.ops[1].operands[1] = weight(7);
  Verify v(g);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.text.find("operand of 'matmul' is out of range"), std::string::npos) << v.text;
}

TEST(GraphVerifier, RejectsAGraphWithoutOutputs) {
  Graph g = validGraph();
  g.outputs.clear();
  Verify v(g);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.text.find("graph 'g' has no output"), std::string::npos) << v.text;
}

TEST(GraphVerifier, RejectsAResultDefinedTwice) {
  Graph g = validGraph();
  g.ops[2].result = 2; // argmax claims matmul's result.
  Verify v(g);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.text.find("the result of 'argmax' is not a fresh value"), std::string::npos) << v.text;
}

} // namespace
