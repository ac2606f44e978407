//===- ChatTemplateTest.cpp - The Jinja subset, construct by construct ----===//
#include "ti/Tokenizer/ChatTemplate.h"

#include <gtest/gtest.h>

namespace ti {
namespace {

std::string render(const std::string &source, const std::string &variables = "{}") {
  auto t = ChatTemplate::parse(source);
  if (!t.ok()) return "error: " + t.status().message();
  auto text = t->renderJson(variables);
  return text.ok() ? *text : "error: " + text.status().message();
}

TEST(ChatTemplate, WhitespaceControlAndBlockTrimming) {
  // trim_blocks drops the newline after a block tag; lstrip_blocks the indent before one.
  EXPECT_EQ(render("{% if true %}\n    yes\n    {% endif %}\nend"), "    yes\nend");
  EXPECT_EQ(render("a   {{- 'b' -}}   c"), "abc");
  EXPECT_EQ(render("a {# note -#}   b"), "a b");
  EXPECT_EQ(render("line\n"), "line"); // one trailing newline goes
}

TEST(ChatTemplate, LoopsAndTheirVariables) {
  EXPECT_EQ(render("{% for m in messages %}{{ loop.index0 }}{{ m.role }}{% if not loop.last %},{% endif %}{% endfor %}",
                   R"({"messages": [{"role": "a"}, {"role": "b"}]})"),
            "0a,1b");
  EXPECT_EQ(render("{% for x in xs[::-1] %}{{ x }}{% endfor %}|{{ xs[1:] }}|{{ xs[-1] }}", R"({"xs": [1, 2, 3]})"),
            "321|[2, 3]|3");
  EXPECT_EQ(render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", R"({"d": {"b": 1, "a": 2}})"),
            "b=1;a=2;");
}

TEST(ChatTemplate, SetStaysInItsLoopButANamespaceCarriesOut) {
  EXPECT_EQ(render("{% set x = 1 %}{% for i in [1, 2] %}{% set x = i %}{% endfor %}{{ x }}"), "1");
  EXPECT_EQ(render("{% set ns = namespace(n=0) %}{% for i in [1, 2] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}"),
            "3");
}

TEST(ChatTemplate, FiltersTestsAndOperators) {
  EXPECT_EQ(render("{{ xs|length - 1 }}", R"({"xs": [1, 2, 3]})"), "2");
  EXPECT_EQ(render("{{ ' a '|trim }}|{{ {'k': [1, 'x', none, true]}|tojson }}"), "a|{\"k\": [1, \"x\", null, true]}");
  EXPECT_EQ(render("{{ x is defined }} {{ y is not none }} {{ 'a' is string }} {{ false is false }}", R"({"x": 1})"),
            "True True True True");
  EXPECT_EQ(render("{{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' not in {'k': 1} }} {{ 7 // 2 }} {{ -7 % 3 }}"),
            "True True False 3 2");
  EXPECT_EQ(render("{{ 'yes' if x else 'no' }} {{ missing or 'default' }} {{ 'a' ~ 1 }}", R"({"x": 0})"),
            "no default a1");
}

TEST(ChatTemplate, StringMethodsStripOnlyTheCharactersGiven) {
  // As Python (and Transformers) do; @huggingface/jinja 0.5.13 strips all
  // whitespace whatever the argument.
  EXPECT_EQ(render("[{{ '\\n  x  \\n'.lstrip('\\n') }}]"), "[  x  \n]");
  EXPECT_EQ(render("[{{ '  x  '.strip() }}]"), "[x]");
  EXPECT_EQ(render("{{ 'a</think>b'.split('</think>')[-1] }} {{ 'abc'.startswith('ab') }} {{ 'ABC'.lower() }}"),
            "b True abc");
}

TEST(ChatTemplate, RefusesMessagesThatAreNotUtf8) {
  auto t = ChatTemplate::parse("{{ messages[0].content }}");
  ASSERT_TRUE(t.ok());
  auto text = t->render({{"user", "ok"}, {"user", "bad \xFF"}}, {}, {});
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(), "message 2 is not valid UTF-8 (byte 4)");
}

TEST(ChatTemplate, RendersAConversationWithTheTokenizersTokens) {
  auto t = ChatTemplate::parse(
      "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content | trim }}{% endfor %}"
      "{% if add_generation_prompt %}<assistant>{% endif %}");
  ASSERT_TRUE(t.ok());
  TokenizerConfig config;
  config.bosToken = "<s>";
  auto text = t->render({{"system", " Be brief. "}, {"user", "Hi"}}, {}, config);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "<s><system>Be brief.<user>Hi<assistant>");
}

TEST(ChatTemplate, NamesWhatItDoesNotSupport) {
  EXPECT_EQ(render("x\n{% macro m() %}{% endmacro %}"),
            "error: chat template: line 2: the statement 'macro' is not supported");
  EXPECT_EQ(render("{{ x | wordcount }}"), "error: chat template: line 1: the filter 'wordcount' is not supported");
  EXPECT_EQ(render("{{ x is odd }}"), "error: chat template: line 1: the test 'odd' is not supported");
  EXPECT_EQ(render("{{ 'a'.zfill(3) }}"), "error: chat template: line 1: the method zfill() is not supported");
  EXPECT_EQ(render("{% if x %}"), "error: chat template: line 1: the template ends before {% endif %}");
  EXPECT_EQ(render("{{ 'open"), "error: chat template: line 1: a string is never closed");
  EXPECT_EQ(render("{{ raise_exception('only user and assistant') }}"),
            "error: chat template: line 1: the template raised an error: only user and assistant");
  EXPECT_EQ(render("{{ 99999999999999999999 }}"), "error: chat template: line 1: the number 99999999999999999999 is too large");
  EXPECT_EQ(render("{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}"),
            "error: chat template: line 1: blocks and expressions nested deeper than 200 levels");
  EXPECT_EQ(render("{{ " + std::string(300, '-') + "1 }}"),
            "error: chat template: line 1: blocks and expressions nested deeper than 200 levels");
  std::string blocks;
  for (int i = 0; i < 300; ++i) blocks += "{% if true %}";
  EXPECT_EQ(render(blocks), "error: chat template: line 1: blocks and expressions nested deeper than 200 levels");
  std::string chain = "{{ 1";
  for (int i = 0; i < 300; ++i) chain += " + 1";
  EXPECT_EQ(render(chain + " }}"), "error: chat template: line 1: blocks and expressions nested deeper than 200 levels");
  std::string attributes = "{{ x";
  for (int i = 0; i < 300; ++i) attributes += ".a";
  EXPECT_EQ(render(attributes + " }}"),
            "error: chat template: line 1: blocks and expressions nested deeper than 200 levels");
  std::string conditional = "{{ 1";
  for (int i = 0; i < 300; ++i) conditional += " if 0 else 1";
  EXPECT_EQ(render(conditional + " }}"),
            "error: chat template: line 1: blocks and expressions nested deeper than 200 levels");
  EXPECT_EQ(render("{% set ns = namespace(a=1) %}{% set ns.self = [ns] %}"),
            "error: chat template: line 1: set ns.self would store the namespace inside itself");
  EXPECT_EQ(render("{{ (-9223372036854775807 - 1) // -1 }}"), "error: chat template: line 1: integer overflow");
  EXPECT_EQ(render("{{ 9223372036854775807 + 1 }}"), "error: chat template: line 1: integer overflow");
  EXPECT_EQ(render("{{ 'abc'[2::9223372036854775807] }}|{{ 'abcdef'[::-2] }}"), "c|fdb");
  EXPECT_EQ(render("{% set ns = namespace(s='x') %}{% for i in range(30) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"),
            "error: chat template: line 1: a string passes 16 MiB");
  EXPECT_EQ(render("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"),
            "error: chat template: line 1: the template runs for more than a million steps");
  // ChatTemplateFuzzer's find in CI: an empty index made a node without its
  // key, which the renderer followed (a null reference under UBSan).
  EXPECT_EQ(render("{{ mass[][::-1] }}"), "error: chat template: line 1: expected an index between '[' and ']'");
  EXPECT_EQ(render("{{ x[] }}"), "error: chat template: line 1: expected an index between '[' and ']'");
  EXPECT_EQ(render("{{ 'abc'[:] }}|{{ 'abc'[::] }}"), "abc|abc");
  EXPECT_EQ(render("{{ 1 + 'a' }}"),
            "error: chat template: line 1: '+' between values that are not both numbers (or strings for +)");
}

} // namespace
} // namespace ti
