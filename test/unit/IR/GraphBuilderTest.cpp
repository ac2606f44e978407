//===- GraphBuilderTest.cpp -----------------------------------------------===//
#include "Compile.h"

#include "llvm/ADT/StringExtras.h"

#include <gtest/gtest.h>

using namespace ti;

namespace {

const char *kTwoLayers = R"(graph g {
  dim n = 4
  dim layers = 3
  attr eps = 1e-5
  attr eos = [7, 9]
  input token: i32[1]
  input pos: i32[1]
  weight e: bf16[10, n] = "embed"
  x = embed(e, token)
  for l in 0..layers {
    weight s: bf16[n] = "layers.{l}.norm"
    weight w: bf16[n, n] = "layers.{l}.w"
    h = rmsnorm(x, s, eps=eps)
    y = matmul(h, w)
    x = add(x, y)
  }
  logits = matmul(x, e)
  output logits
}
)";

TEST(GraphBuilder, UnrollsLoopsAndSubstitutesCheckpointNames) {
  test::Compilation c(kTwoLayers);
  ASSERT_TRUE(c.build()) << c.diagnostics();
  const Graph &g = *c.graph;
  ASSERT_EQ(g.weights.size(), 7u);
  EXPECT_EQ(g.weights[1].name, "s.0");
  EXPECT_EQ(g.weights[1].checkpoint, "layers.0.norm");
  EXPECT_EQ(g.weights[6].name, "w.2");
  EXPECT_EQ(g.weights[6].checkpoint, "layers.2.w");
  EXPECT_EQ(g.weights[6].layer, 2);
  EXPECT_EQ(g.weights[0].layer, -1);
  // embed + 3 * (rmsnorm, matmul, add) + matmul.
  ASSERT_EQ(g.ops.size(), 11u);
  EXPECT_EQ(g.ops[4].layer, 1);
  EXPECT_EQ(g.ops[10].layer, -1);
}

TEST(GraphBuilder, RebindingCarriesTheValueIntoTheNextIteration) {
  test::Compilation c(kTwoLayers);
  ASSERT_TRUE(c.build()) << c.diagnostics();
  const Graph &g = *c.graph;
  // Layer 1's rmsnorm reads layer 0's `x = add(...)`.
  const Op &norm1 = g.ops[4];
  ASSERT_EQ(norm1.kind, OpKind::RmsNorm);
  EXPECT_EQ(g.values[norm1.operands[0].index].name, "x.0");
  // lm_head reads the last layer's x.
  const Op &head = g.ops.back();
  EXPECT_EQ(g.values[head.operands[0].index].name, "x.2");
  EXPECT_EQ(head.operands[1].kind, Operand::Kind::Weight);
  EXPECT_EQ(g.weights[head.operands[1].index].name, "e"); // Tied to the embedding.
  EXPECT_EQ(g.values[g.outputs[0]].type.str(), "f32[10]");
}

TEST(GraphBuilder, AttributesAreEvaluated) {
  test::Compilation c(kTwoLayers);
  ASSERT_TRUE(c.build()) << c.diagnostics();
  const Graph &g = *c.graph;
  ASSERT_NE(g.findAttr("eos"), nullptr);
  EXPECT_EQ(g.findAttr("eos")->value.list, (std::vector<int64_t>{7, 9}));
  const NamedAttr *eps = g.ops[1].findAttr("eps");
  ASSERT_NE(eps, nullptr);
  EXPECT_EQ(eps->value.kind, AttrValue::Kind::Float);
  EXPECT_DOUBLE_EQ(eps->value.f, 1e-5);
  EXPECT_EQ(g.findDim("layers"), 3);
  EXPECT_EQ(g.findDim("missing"), std::nullopt);
}

TEST(GraphBuilder, DimArithmetic) {
  test::Compilation c(R"(graph g {
  dim heads = 32
  dim head_dim = 64
  dim q = heads*head_dim
  dim kv = q / 4 - 8 % 3 + 2
  input t: i32[1]
  weight e: bf16[kv, q] = "e"
  x = embed(e, t)
  output x
})");
  ASSERT_TRUE(c.build()) << c.diagnostics();
  EXPECT_EQ(c.graph->findDim("q"), 2048);
  EXPECT_EQ(c.graph->findDim("kv"), 512);
  EXPECT_EQ(c.graph->weights[0].type.str(), "bf16[512, 2048]");
}

TEST(GraphBuilder, NestedLoopsGetNestedSuffixes) {
  test::Compilation c(R"(graph g {
  input t: i32[1]
  weight e: bf16[4, 2] = "e"
  x = embed(e, t)
  for i in 0..2 {
    for j in 0..2 {
      weight w: bf16[2, 2] = "w.{i}.{j}"
      y = matmul(x, w)
      x = add(x, y)
    }
  }
  output x
})");
  ASSERT_TRUE(c.build()) << c.diagnostics();
  const Graph &g = *c.graph;
  ASSERT_EQ(g.weights.size(), 5u);
  EXPECT_EQ(g.weights[4].name, "w.1.1");
  EXPECT_EQ(g.weights[4].checkpoint, "w.1.1");
  EXPECT_EQ(g.weights[3].layer, 1); // The outermost loop's iteration.
  EXPECT_EQ(g.values[g.outputs[0]].name, "x.1.1");
}

TEST(GraphBuilder, UnusedWeightIsAWarningNotAnError) {
  test::Compilation c(R"(graph g {
  input t: i32[1]
  weight e: bf16[4, 2] = "e"
  weight spare: bf16[2] = "spare"
  x = embed(e, t)
  output x
})");
  ASSERT_TRUE(c.build()) << c.diagnostics();
  EXPECT_NE(c.diagnostics().find("4:10: warning: weight 'spare' is never used"),
            std::string::npos)
      << c.diagnostics();
}

TEST(GraphBuilder, OneMistakeOneError) {
  // The bad dim poisons its name; nothing that uses it reports again.
  test::Compilation c(R"(graph g {
  dim n = 4 / 0
  input t: i32[1]
  weight e: bf16[4, n] = "e"
  weight w: bf16[n, n] = "w"
  x = embed(e, t)
  y = matmul(x, w)
  output y
})");
  EXPECT_FALSE(c.build());
  EXPECT_EQ(c.diags.errorCount(), 1u) << c.diagnostics();
  EXPECT_NE(c.diagnostics().find("2:13: error: division by zero"), std::string::npos)
      << c.diagnostics();
}

TEST(GraphBuilder, NamesAreNotNumbers) {
  test::Compilation c(R"(graph g {
  input t: i32[1]
  weight e: bf16[4, t] = "e"
  output t
})");
  EXPECT_FALSE(c.build());
  EXPECT_NE(c.diagnostics().find("3:21: error: 't' is an input, not a number"), std::string::npos)
      << c.diagnostics();
}

TEST(GraphBuilder, ShippedModelsBuild) {
  for (const char *name : {"tiny", "llama32-1b", "llama32-3b", "llama31-8b"}) {
    std::string path = std::string(TI_SOURCE_DIR) + "/models/" + name + ".graph";
    auto buffer = llvm::MemoryBuffer::getFile(path);
    ASSERT_TRUE(bool(buffer)) << path;
    test::Compilation c((*buffer)->getBuffer().str(), path);
    ASSERT_TRUE(c.build()) << c.diagnostics();
    EXPECT_TRUE(c.diagnostics().empty()) << c.diagnostics();
  }
}

} // namespace
