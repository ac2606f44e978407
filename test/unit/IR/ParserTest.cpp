//===- ParserTest.cpp -----------------------------------------------------===//
#include "Compile.h"

#include "ti/IR/Printer.h"

#include <gtest/gtest.h>

using namespace ti;
using namespace ti::ast;

namespace {

std::string exprText(const Expr &e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  printExpr(e, os);
  return os.str();
}

TEST(Parser, StatementsInOrder) {
  test::Compilation c(R"(graph g {
  dim n = 4
  attr eps = 1e-5
  input token: i32[1]
  weight e: bf16[16, n] = "embed"
  x = embed(e, token)
  for l in 0..2 {
    x = add(x, x)
  }
  output x
})");
  ASSERT_TRUE(c.parse()) << c.diagnostics();
  const GraphAST &g = *c.ast;
  EXPECT_EQ(g.name, "g");
  ASSERT_EQ(g.body.size(), 7u);
  EXPECT_EQ(g.body[0]->kind, Stmt::Kind::Dim);
  EXPECT_EQ(g.body[1]->kind, Stmt::Kind::Attr);
  EXPECT_EQ(g.body[2]->kind, Stmt::Kind::Input);
  EXPECT_EQ(g.body[3]->kind, Stmt::Kind::Weight);
  EXPECT_EQ(g.body[4]->kind, Stmt::Kind::Assign);
  EXPECT_EQ(g.body[5]->kind, Stmt::Kind::For);
  EXPECT_EQ(g.body[6]->kind, Stmt::Kind::Output);

  const auto &w = llvm::cast<WeightStmt>(*g.body[3]);
  EXPECT_EQ(w.name, "e");
  EXPECT_EQ(w.type.dtype, "bf16");
  ASSERT_EQ(w.type.dims.size(), 2u);
  EXPECT_EQ(exprText(*w.type.dims[1]), "n");
  EXPECT_EQ(w.source, "embed");

  const auto &loop = llvm::cast<ForStmt>(*g.body[5]);
  EXPECT_EQ(loop.var, "l");
  ASSERT_EQ(loop.body.size(), 1u);
  EXPECT_EQ(llvm::cast<AssignStmt>(*loop.body[0]).op, "add");
}

TEST(Parser, Locations) {
  test::Compilation c("graph g {\n  dim n = 4\n  input t: i32[1]\n  output t\n}\n");
  ASSERT_TRUE(c.parse()) << c.diagnostics();
  auto [line, col] = c.sourceMgr.getLineAndColumn(c.ast->body[1]->loc);
  EXPECT_EQ(line, 3u);
  EXPECT_EQ(col, 3u);
  const auto &input = llvm::cast<InputStmt>(*c.ast->body[1]);
  EXPECT_EQ(c.sourceMgr.getLineAndColumn(input.nameLoc).second, 9u);
}

TEST(Parser, ExpressionPrecedenceAndAssociativity) {
  test::Compilation c("graph g {\n  dim a = 1 + 2 * 3 - 4 / 2\n  dim b = (1 + 2) * 3\n"
                      "  dim c = 8 - (4 - 2)\n  dim d = -2 * 3\n}\n");
  ASSERT_TRUE(c.parse()) << c.diagnostics();
  auto value = [&](int i) -> const Expr & { return *llvm::cast<DimStmt>(*c.ast->body[i]).value; };
  // a = (1 + (2*3)) - (4/2): '-' at the top, its left operand a '+'.
  const auto &a = llvm::cast<BinaryExpr>(value(0));
  EXPECT_EQ(a.op, '-');
  EXPECT_EQ(llvm::cast<BinaryExpr>(*a.lhs).op, '+');
  EXPECT_EQ(llvm::cast<BinaryExpr>(*a.rhs).op, '/');
  EXPECT_EQ(exprText(value(0)), "1 + 2*3 - 4/2");
  EXPECT_EQ(exprText(value(1)), "(1 + 2)*3");
  EXPECT_EQ(exprText(value(2)), "8 - (4 - 2)");
  EXPECT_EQ(llvm::cast<BinaryExpr>(value(3)).lhs->kind, Expr::Kind::Negate);
}

TEST(Parser, OpArguments) {
  test::Compilation c("graph g {\n  y = rope(x, pos, head_dim=64, theta=5e5, scaling=\"llama3\")\n}\n");
  ASSERT_TRUE(c.parse()) << c.diagnostics();
  const auto &s = llvm::cast<AssignStmt>(*c.ast->body[0]);
  EXPECT_EQ(s.name, "y");
  EXPECT_EQ(s.op, "rope");
  ASSERT_EQ(s.args.size(), 5u);
  EXPECT_TRUE(s.args[0].keyword.empty());
  EXPECT_EQ(llvm::cast<NameExpr>(*s.args[1].value).name, "pos");
  EXPECT_EQ(s.args[2].keyword, "head_dim");
  EXPECT_EQ(llvm::cast<IntegerExpr>(*s.args[2].value).value, 64);
  EXPECT_DOUBLE_EQ(llvm::cast<FloatExpr>(*s.args[3].value).value, 5e5);
  EXPECT_EQ(llvm::cast<StringExpr>(*s.args[4].value).value, "llama3");
}

TEST(Parser, ListsAndEmptyArgs) {
  test::Compilation c("graph g {\n  attr eos = [1, 2, 3]\n  attr none = []\n  y = f()\n}\n");
  ASSERT_TRUE(c.parse()) << c.diagnostics();
  EXPECT_EQ(llvm::cast<ListExpr>(*llvm::cast<AttrStmt>(*c.ast->body[0]).value).elements.size(), 3u);
  EXPECT_TRUE(llvm::cast<ListExpr>(*llvm::cast<AttrStmt>(*c.ast->body[1]).value).elements.empty());
  EXPECT_TRUE(llvm::cast<AssignStmt>(*c.ast->body[2]).args.empty());
}

TEST(Parser, RecoversAtTheNextStatement) {
  test::Compilation c("graph g {\n  dim = 4\n  dim n = 4\n  weight w bf16[4] = \"w\"\n"
                      "  input t: i32[1]\n  y = = add(t)\n  output t\n}\n");
  EXPECT_FALSE(c.parse());
  EXPECT_EQ(c.diags.errorCount(), 3u) << c.diagnostics();
  EXPECT_NE(c.diagnostics().find("test.graph:2:7: error: expected identifier after 'dim', found '='"),
            std::string::npos)
      << c.diagnostics();
  EXPECT_NE(c.diagnostics().find("test.graph:4:12: error: expected ':' after the weight's name"),
            std::string::npos)
      << c.diagnostics();
  EXPECT_NE(c.diagnostics().find("test.graph:6:7: error: expected identifier (an op's name)"),
            std::string::npos)
      << c.diagnostics();
}

TEST(Parser, BadForHeaderSkipsItsBody) {
  // The body's statements are not parsed as graph-level ones, and its '}' does
  // not close the graph.
  test::Compilation c("graph g {\n  for l in 0 2 {\n    dim x = 1\n  }\n  output y\n}\n");
  EXPECT_FALSE(c.parse());
  EXPECT_EQ(c.diags.errorCount(), 1u) << c.diagnostics();
}

TEST(Parser, MissingCheckpointName) {
  test::Compilation c("graph g {\n  weight w: bf16[4]\n  output w\n}\n");
  EXPECT_FALSE(c.parse());
  EXPECT_NE(c.diagnostics().find("2:10: error: weight 'w' has no checkpoint tensor"),
            std::string::npos)
      << c.diagnostics();
}

TEST(Parser, EmptyCheckpointName) {
  test::Compilation c("graph g {\n  weight w: bf16[4] = \"\"\n}\n");
  EXPECT_FALSE(c.parse());
  EXPECT_NE(c.diagnostics().find("2:23: error: the checkpoint tensor's name is empty"),
            std::string::npos)
      << c.diagnostics();
}

TEST(Parser, UnclosedGraph) {
  test::Compilation c("graph g {\n  dim n = 4\n");
  EXPECT_FALSE(c.parse());
  EXPECT_NE(c.diagnostics().find("1:9: error: '{' is never closed"), std::string::npos)
      << c.diagnostics();
}

TEST(Parser, IntegerTooLarge) {
  test::Compilation c("graph g {\n  dim n = 99999999999999999999\n}\n");
  EXPECT_FALSE(c.parse());
  EXPECT_NE(c.diagnostics().find("does not fit in 64 bits"), std::string::npos);
}

} // namespace
