// The official `openai` npm client (third_party/npm, pinned) against tirun
// serve: a chat and a text completion, whole and streamed, with the seeds
// and sampling serve_check.py gives; prints one JSON object of the texts and
// usages for it to compare with tirun --prompt.
//   node openai_client.cjs NODE_MODULES BASE_URL MODEL API_KEY REQUESTS_JSON
const path = require("path");
const OpenAI = require(path.resolve(process.argv[2], "openai"));

async function main() {
  const [baseURL, model, apiKey, requestsJson] = process.argv.slice(3);
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60000 });
  const requests = JSON.parse(requestsJson);
  const out = {};
  for (const [name, r] of Object.entries(requests)) {
    const body = { model, max_tokens: r.max_tokens, temperature: r.temperature, seed: r.seed };
    if (r.chat) {
      body.messages = [{ role: "user", content: r.text }];
      const whole = await client.chat.completions.create(body);
      const stream = await client.chat.completions.create({ ...body, stream: true,
                                                            stream_options: { include_usage: true } });
      let streamed = "", usage = null, finish = null;
      for await (const chunk of stream) {
        if (chunk.usage) usage = chunk.usage;
        for (const c of chunk.choices) {
          streamed += c.delta.content || "";
          if (c.finish_reason) finish = c.finish_reason;
        }
      }
      out[name] = { whole: whole.choices[0].message.content, streamed, finish,
                    usage: whole.usage, streamUsage: usage };
    } else {
      body.prompt = r.text;
      const whole = await client.completions.create(body);
      const stream = await client.completions.create({ ...body, stream: true });
      let streamed = "";
      for await (const chunk of stream) for (const c of chunk.choices) streamed += c.text || "";
      out[name] = { whole: whole.choices[0].text, streamed, usage: whole.usage };
    }
  }
  // An error the client raises as it would for OpenAI's own.
  try {
    await client.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "x" }] });
    out.error = null;
  } catch (e) {
    out.error = { status: e.status, code: e.code };
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(`openai_client: ${e}`); process.exit(1); });
