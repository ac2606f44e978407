//===- PrinterTest.cpp ----------------------------------------------------===//
#include "Compile.h"

#include "ti/IR/Printer.h"

#include <gtest/gtest.h>

using namespace ti;

namespace {

TEST(Printer, Thousands) {
  EXPECT_EQ(withThousands(0), "0");
  EXPECT_EQ(withThousands(999), "999");
  EXPECT_EQ(withThousands(1000), "1,000");
  EXPECT_EQ(withThousands(1235814400), "1,235,814,400");
}

TEST(Printer, FloatsReadBackAsFloats) {
  EXPECT_EQ(AttrValue::ofFloat(500000.0).str(), "500000.0");
  EXPECT_EQ(AttrValue::ofFloat(1e-5).str(), "0.00001");
  EXPECT_EQ(AttrValue::ofFloat(0.1).str(), "0.1");
  EXPECT_EQ(AttrValue::ofFloat(1e30).str(), "1e+30");
  EXPECT_EQ(AttrValue::ofFloat(1.0 / 3).str(), "0.3333333333333333");
  EXPECT_EQ(AttrValue::ofInt(-3).str(), "-3");
  EXPECT_EQ(AttrValue::ofList({1, 2}).str(), "[1, 2]");
}

/// Printing then parsing then printing gives the first print again.
std::string roundTrip(const std::string &text) {
  test::Compilation c(text);
  EXPECT_TRUE(c.parse()) << c.diagnostics();
  std::string first;
  llvm::raw_string_ostream os(first);
  printGraphAST(*c.ast, os);
  os.flush();
  test::Compilation again(first);
  EXPECT_TRUE(again.parse()) << again.diagnostics() << first;
  std::string second;
  llvm::raw_string_ostream os2(second);
  printGraphAST(*again.ast, os2);
  os2.flush();
  EXPECT_EQ(first, second);
  return first;
}

TEST(Printer, FixedPointOnTrickyExpressions) {
  std::string out = roundTrip("graph g {\n dim a = 1 - (2 - 3) - 4\n dim b = 2 * (3 * 4) / (5 % 2)\n"
                              " dim c = -(1 + 2) * -3\n attr f = 3.0e2\n attr s = \"x y\"\n}\n");
  EXPECT_NE(out.find("dim a = 1 - (2 - 3) - 4\n"), std::string::npos) << out;
  EXPECT_NE(out.find("dim b = 2*(3*4)/(5%2)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("dim c = -(1 + 2)*-3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("attr f = 300.0\n"), std::string::npos) << out;
}

TEST(Printer, GraphIRNamesWeightsAndValuesApart) {
  test::Compilation c("graph g {\n  input t: i32[1]\n  weight e: bf16[4, 2] = \"e\"\n"
                      "  x = embed(e, t)\n  output x\n}\n");
  ASSERT_TRUE(c.build()) << c.diagnostics();
  std::string text;
  llvm::raw_string_ostream os(text);
  printGraphIR(*c.graph, os);
  os.flush();
  EXPECT_NE(text.find("  %x = embed(@e, %t) : f32[2]\n"), std::string::npos) << text;
}

} // namespace
