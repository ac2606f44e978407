"""A seeded random Llama checkpoint, the same weights for every runtime.

A LlamaForCausalLM with the exact config of one of the published models that
models/ holds a graph for (Llama 3.2 1B and 3B, Llama 3.1 8B; CONFIGS, keyed
by the graph's name) is initialised from torch.manual_seed(seed), its norm
scales perturbed around 1 (so that a dropped scale would show), cast to BF16
and saved with save_pretrained as safetensors. The checkpoint is written to
DIR.tmp and renamed to DIR, with a marker file recording the model and the
seed, so DIR either holds a complete checkpoint or none; a complete one of
the same model and seed is reused.

  python3 bench/llama_checkpoint.py DIR [--model llama32_1b] [--seed 1234]
"""
import argparse
import json
import os
import re
import shutil

MARKER = "tileinfer-checkpoint.json"
RECIPE = 1  # Bump when the recipe below changes, so old checkpoints are rebuilt.


def _made_with(directory):
    """The marker of a complete checkpoint in directory, or None."""
    try:
        with open(os.path.join(directory, MARKER)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# The published configs (each checkpoint's config.json) of the models with a
# graph in models/, by graph name; test_llama_checkpoint.py checks them
# against the graphs' sizes.
_LLAMA3_ROPE = {"rope_type": "llama3", "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192}
_COMMON = dict(vocab_size=128256, num_key_value_heads=8, max_position_embeddings=131072,
               rms_norm_eps=1e-5, bos_token_id=128000, hidden_act="silu", attention_bias=False,
               mlp_bias=False, rope_theta=500000.0)
CONFIGS = {
    "llama32_1b": dict(_COMMON, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                       num_attention_heads=32, head_dim=64, tie_word_embeddings=True,
                       eos_token_id=[128001, 128009], rope_factor=32.0),
    "llama32_3b": dict(_COMMON, hidden_size=3072, intermediate_size=8192, num_hidden_layers=28,
                       num_attention_heads=24, head_dim=128, tie_word_embeddings=True,
                       eos_token_id=[128001, 128009], rope_factor=32.0),
    "llama31_8b": dict(_COMMON, hidden_size=4096, intermediate_size=14336,
                       num_hidden_layers=32, num_attention_heads=32, head_dim=128,
                       tie_word_embeddings=False, eos_token_id=[128001, 128008, 128009],
                       rope_factor=8.0),
}


def graph_name(path):
    """The name a model graph file declares (`graph NAME {`)."""
    with open(path) as f:
        found = re.search(r"^\s*graph\s+(\w+)", f.read(), re.M)
    if not found:
        raise ValueError(f"{path} names no graph")
    return found.group(1)


def llama_config(model="llama32_1b"):
    """The LlamaConfig of `model` (a key of CONFIGS), for the Transformers
    version installed."""
    if model not in CONFIGS:
        raise ValueError(f"no published config for graph '{model}' (known: "
                         f"{', '.join(sorted(CONFIGS))})")
    from transformers import LlamaConfig

    base = dict(CONFIGS[model])
    rope = dict(_LLAMA3_ROPE, factor=base.pop("rope_factor"))
    theta = base.pop("rope_theta")
    # Transformers 5 names the RoPE settings rope_parameters (theta inside);
    # earlier versions rope_scaling and rope_theta.
    try:
        config = LlamaConfig(**base, rope_parameters=dict(rope, rope_theta=theta))
        assert config.rope_parameters["rope_type"] == "llama3"
    except Exception:
        config = LlamaConfig(**base, rope_scaling=rope, rope_theta=theta)
    return config


def build_checkpoint(directory, seed=1234, log=print, model="llama32_1b"):
    """Makes the checkpoint of `model` in directory unless it already holds
    one of it from seed. Returns directory."""
    marker = {"recipe": RECIPE, "model": model, "seed": seed}
    made = _made_with(directory)
    if made == marker:
        return directory
    if made is None and os.path.isdir(directory) and os.listdir(directory):
        raise RuntimeError(f"{directory} exists but holds no checkpoint made here; remove it")

    import torch
    import transformers
    from transformers import LlamaForCausalLM

    torch.manual_seed(seed)
    config = llama_config(model)
    config._attn_implementation = "eager"
    net = LlamaForCausalLM(config)
    with torch.no_grad():
        for name, param in net.named_parameters():
            if name.endswith("norm.weight"):
                param.copy_(1.0 + 0.1 * torch.randn_like(param))
    net = net.to(torch.bfloat16)
    tmp = directory.rstrip("/") + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    net.save_pretrained(tmp, safe_serialization=True)
    with open(os.path.join(tmp, MARKER), "w") as f:
        json.dump(marker, f)
    if made is not None:
        shutil.rmtree(directory)  # Ours, from another model, seed or recipe.
    elif os.path.isdir(directory):
        os.rmdir(directory)  # Empty.
    os.replace(tmp, directory)
    log(f"transformers {transformers.__version__}, torch {torch.__version__}: "
        f"saved {directory} ({model}, seed {seed})")
    return directory


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory")
    ap.add_argument("--model", default="llama32_1b", choices=sorted(CONFIGS),
                    help="the graph name of the published model")
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    build_checkpoint(args.directory, args.seed, model=args.model)


if __name__ == "__main__":
    main()
