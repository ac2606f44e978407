// bench/serve_latency.py's streamed chat (bench/serve_chat.json) through the
// official `openai` npm client, as an application built on it has it: for each
// turn, the time to the first text (from the call to the first chunk with
// content) and the time per token after it (from the usage chunk's
// completion_tokens), with the prompt tokens the cache already held
// (usage.prompt_tokens_details.cached_tokens). One line per turn; exits 1
// with the reason on any error.
//   node serve_latency.cjs NODE_MODULES PORT [--turns 3] [--max-tokens 128] [--api-key KEY]
const fs = require("fs");
const path = require("path");

function options(argv) {
  const o = { modules: argv[0], port: Number(argv[1]), turns: 3, maxTokens: 128, apiKey: "unused" };
  for (let i = 2; i < argv.length; i += 2) {
    const [name, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${name} needs a value`);
    if (name === "--turns") o.turns = Number(value);
    else if (name === "--max-tokens") o.maxTokens = Number(value);
    else if (name === "--api-key") o.apiKey = value;
    else throw new Error(`unknown option ${name}`);
  }
  if (!o.modules || !(o.port > 0) || !(o.turns > 0) || !(o.maxTokens > 0))
    throw new Error("usage: serve_latency.cjs NODE_MODULES PORT [--turns N] [--max-tokens N] [--api-key KEY]");
  return o;
}

async function main() {
  const o = options(process.argv.slice(2));
  const OpenAI = require(path.resolve(o.modules, "openai"));
  const chat = JSON.parse(fs.readFileSync(path.join(__dirname, "serve_chat.json"), "utf8"));
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${o.port}/v1`, apiKey: o.apiKey, maxRetries: 0,
                              timeout: 300000 });
  const model = (await client.models.list()).data[0].id;
  const messages = [{ role: "system", content: chat.system }];
  for (let turn = 0; turn < o.turns; ++turn) {
    messages.push({ role: "user", content: chat.questions[turn % chat.questions.length] });
    const sent = performance.now();
    const stream = await client.chat.completions.create({
      model, messages, max_tokens: o.maxTokens, stream: true, stream_options: { include_usage: true },
      temperature: chat.temperature, seed: turn });
    let first = null, text = "", usage = null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      for (const c of chunk.choices) {
        const piece = c.delta && c.delta.content;
        if (piece) {
          if (first === null) first = performance.now();
          text += piece;
        }
      }
    }
    const end = performance.now();
    if (usage === null || first === null) throw new Error(`turn ${turn + 1}: no usage chunk or no text`);
    const tokens = usage.completion_tokens;
    const perToken = (end - first) / Math.max(1, tokens - 1);
    console.log(`turn ${turn + 1}: ${usage.prompt_tokens} prompt tokens, ` +
                `${usage.prompt_tokens_details.cached_tokens} cached; first text after ` +
                `${(first - sent).toFixed(1)} ms; ${tokens} tokens, ${perToken.toFixed(3)} ms per token ` +
                `after the first (openai client)`);
    messages.push({ role: "assistant", content: text });
  }
}

main().catch((e) => { console.error(`serve_latency.cjs: ${e.message || e}`); process.exit(1); });
