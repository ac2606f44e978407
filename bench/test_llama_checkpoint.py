#!/usr/bin/env python3
"""The random checkpoints' configs against the model graphs (no torch needed).

Every Llama graph in models/ (all but tiny.graph) must name a published
config in bench/llama_checkpoint.py's CONFIGS whose sizes and constants are
the graph's own: a baseline run on a config that differs from the graph
would time another model.

  python3 bench/test_llama_checkpoint.py
"""
import glob
import os
import re
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import llama_checkpoint as lc  # noqa: E402

MODELS = os.path.join(HERE, "..", "models")
# A graph's dims and the config fields they must equal.
DIMS = {"vocab": "vocab_size", "hidden": "hidden_size", "ffn": "intermediate_size",
        "heads": "num_attention_heads", "kv_heads": "num_key_value_heads",
        "head_dim": "head_dim", "layers": "num_hidden_layers"}


def graph_facts(text):
    """What a graph declares that a LlamaConfig also says."""
    dims = {k: int(v) for k, v in re.findall(r"^\s*dim\s+(\w+)\s*=\s*(\d+)", text, re.M)}
    attr = dict(re.findall(r"^\s*attr\s+(\w+)\s*=\s*(.+?)\s*$", text, re.M))
    factors = set(re.findall(r"\brope\([^)]*\bfactor=([0-9.]+)", text))
    return {
        "dims": dims,
        "bos": int(attr["bos_token"]),
        "eos": [int(t) for t in re.findall(r"\d+", attr["eos_tokens"])],
        "eps": float(attr["rms_eps"]),
        "theta": float(attr["rope_theta"]),
        "rope_factors": {float(f) for f in factors},
        "tied": re.search(r"^\s*weight\s+lm_head\b", text, re.M) is None,
    }


def llama_graphs():
    return sorted(p for p in glob.glob(os.path.join(MODELS, "*.graph"))
                  if os.path.basename(p) != "tiny.graph")


class ConfigsMatchTheGraphs(unittest.TestCase):
    def test_every_graph_has_its_config(self):
        names = [lc.graph_name(p) for p in llama_graphs()]
        self.assertTrue(names)
        self.assertEqual(sorted(names), sorted(lc.CONFIGS))

    def test_sizes_and_constants_agree(self):
        for path in llama_graphs():
            with self.subTest(graph=os.path.basename(path)):
                with open(path) as f:
                    g = graph_facts(f.read())
                c = lc.CONFIGS[lc.graph_name(path)]
                for dim, field in DIMS.items():
                    self.assertEqual(c[field], g["dims"][dim], f"{dim} / {field}")
                self.assertEqual(c["bos_token_id"], g["bos"])
                self.assertEqual(c["eos_token_id"], g["eos"])
                self.assertEqual(c["rms_norm_eps"], g["eps"])
                self.assertEqual(c["rope_theta"], g["theta"])
                self.assertEqual({c["rope_factor"]}, g["rope_factors"])
                self.assertEqual(c["tie_word_embeddings"], g["tied"])

    def test_graph_name(self):
        with tempfile.NamedTemporaryFile("w", suffix=".graph", delete=False) as f:
            f.write("# a comment\ngraph some_model {\n}\n")
        try:
            self.assertEqual(lc.graph_name(f.name), "some_model")
        finally:
            os.unlink(f.name)

    def test_an_unknown_model_is_refused_by_name(self):
        with self.assertRaisesRegex(ValueError, "no published config for graph 'tiny'"):
            lc.llama_config("tiny")


if __name__ == "__main__":
    unittest.main()
