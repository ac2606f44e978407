"""A seeded random Llama-3.2-1B checkpoint, the same weights for every runtime.

A LlamaForCausalLM with the exact Llama-3.2-1B config is initialised from
torch.manual_seed(seed), its norm scales perturbed around 1 (so that a dropped
scale would show), cast to BF16 and saved with save_pretrained as safetensors.
The checkpoint is written to DIR.tmp and renamed to DIR, with a marker file
recording the seed, so DIR either holds a complete checkpoint or none; a
complete one with the same seed is reused.

  python3 bench/llama_checkpoint.py DIR [--seed 1234]
"""
import argparse
import json
import os
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


def llama32_1b_config():
    """The Llama-3.2-1B LlamaConfig, for the Transformers version installed."""
    from transformers import LlamaConfig

    rope = {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
    base = dict(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                num_attention_heads=32, num_key_value_heads=8, head_dim=64,
                max_position_embeddings=131072, rms_norm_eps=1e-5, tie_word_embeddings=True,
                bos_token_id=128000, eos_token_id=[128001, 128009], hidden_act="silu",
                attention_bias=False, mlp_bias=False)
    # Transformers 5 names the RoPE settings rope_parameters (theta inside);
    # earlier versions rope_scaling and rope_theta.
    try:
        config = LlamaConfig(**base, rope_parameters=dict(rope, rope_theta=500000.0))
        assert config.rope_parameters["rope_type"] == "llama3"
    except Exception:
        config = LlamaConfig(**base, rope_scaling=rope, rope_theta=500000.0)
    return config


def build_checkpoint(directory, seed=1234, log=print):
    """Makes the checkpoint in directory unless it already holds one from seed.
    Returns directory."""
    marker = {"recipe": RECIPE, "seed": seed}
    made = _made_with(directory)
    if made == marker:
        return directory
    if made is None and os.path.isdir(directory) and os.listdir(directory):
        raise RuntimeError(f"{directory} exists but holds no checkpoint made here; remove it")

    import torch
    import transformers
    from transformers import LlamaForCausalLM

    torch.manual_seed(seed)
    config = llama32_1b_config()
    config._attn_implementation = "eager"
    model = LlamaForCausalLM(config)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("norm.weight"):
                param.copy_(1.0 + 0.1 * torch.randn_like(param))
    model = model.to(torch.bfloat16)
    tmp = directory.rstrip("/") + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    with open(os.path.join(tmp, MARKER), "w") as f:
        json.dump(marker, f)
    if made is not None:
        shutil.rmtree(directory)  # Ours, from another seed or recipe.
    elif os.path.isdir(directory):
        os.rmdir(directory)  # Empty.
    os.replace(tmp, directory)
    log(f"transformers {transformers.__version__}, torch {torch.__version__}: "
        f"saved {directory} (seed {seed})")
    return directory


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory")
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    build_checkpoint(args.directory, args.seed)


if __name__ == "__main__":
    main()
