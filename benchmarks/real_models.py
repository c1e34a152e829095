"""Real models against `gbcheck diagnose`: does it agree with torch's own graph-break log, and explain it?

On demand, not a test: `python benchmarks/real_models.py [--only NAME ...] [--python PYTHON]
[--baseline-notes OLD.toml]`. Each model of MODELS is built from a tiny config of its library with
random weights (no download) and run once in eval or training mode (forward, and backward in training),
compiled with torch.compile, in a script of its own. That script runs twice, each in a fresh process:
  torch     under torch's own graph-break log (`torch._logging.set_logs(graph_breaks=True)`, what
            TORCH_LOGS="graph_breaks" prints): one record per graph break, its id from the
            registry link in the record (the last one: a chained record names its inner breaks first),
            and the graphs Dynamo compiled (counters["stats"]["unique_graphs"]);
  diagnose  as `python -m checker diagnose SCRIPT --json`.
It prints, per run, both counts, whether the ids (with counts) and graph counts agree, and how many
breaks land in a group with a course note that points to a chapter or PyTorch's docs; then totals.
`--baseline-notes` takes an older notes file (e.g. `git show REV:checker/dynamo/graph_breaks.toml`)
to print the coverage those notes gave, for a before/after figure.

Versions measured: torch 2.13.0 (CPU), transformers 5.18.0, diffusers 0.42.1. `--python` runs the models
in another interpreter (a venv with other torch or library versions; it needs this project importable,
which PYTHONPATH provides).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TEXT = "inputs = dict(input_ids=torch.randint(1, 99, (2, 16)))"
SEQ2SEQ = "inputs = dict(input_ids=torch.randint(1, 99, (2, 16)), decoder_input_ids=torch.randint(1, 99, (2, 8)))"
AUDIO = "inputs = dict(input_values=torch.randn(2, 1600))"
IMAGE = "inputs = dict(pixel_values=torch.randn(2, 3, 32, 32))"
LAYERS = "hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37, vocab_size=99"
S2S_LAYERS = ("d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2, "
              "encoder_ffn_dim=37, decoder_ffn_dim=37, vocab_size=99, max_position_embeddings=64")
AUDIO_LAYERS = (f"{LAYERS}, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16, "
                "num_conv_pos_embedding_groups=2")

# name: (library, mode, code that defines `model` and `inputs`)
MODELS: dict[str, tuple[str, str, str]] = {
    "bert-eval": ("transformers", "eval", f"model = transformers.BertModel(transformers.BertConfig({LAYERS}))\n{TEXT}"),
    "gpt2-train": ("transformers", "train",
                   "model = transformers.GPT2Model(transformers.GPT2Config(n_embd=32, n_layer=2, n_head=2, "
                   f"vocab_size=99, bos_token_id=0, eos_token_id=0))\n{TEXT}"),
    "llama-train": ("transformers", "train", "model = transformers.LlamaModel(transformers.LlamaConfig("
                    f"{LAYERS}, num_key_value_heads=1, max_position_embeddings=64))\n{TEXT}"),
    "mixtral-eval": ("transformers", "eval", "model = transformers.MixtralModel(transformers.MixtralConfig("
                     f"{LAYERS}, num_key_value_heads=1, num_local_experts=4, num_experts_per_tok=2))\n{TEXT}"),
    "bart-train": ("transformers", "train",
                   f"model = transformers.BartModel(transformers.BartConfig({S2S_LAYERS}, encoder_layerdrop=0.1, "
                   f"decoder_layerdrop=0.1))\n{SEQ2SEQ}"),
    "opt-train": ("transformers", "train", "model = transformers.OPTModel(transformers.OPTConfig(hidden_size=32, "
                  "num_hidden_layers=2, num_attention_heads=2, ffn_dim=37, vocab_size=99, word_embed_proj_dim=32, "
                  f"layerdrop=0.1))\n{TEXT}"),
    "longformer-eval": ("transformers", "eval", "model = transformers.LongformerModel(transformers.LongformerConfig("
                        f"{LAYERS}, attention_window=4))\n{TEXT}"),
    "led-eval": ("transformers", "eval", f"model = transformers.LEDModel(transformers.LEDConfig({S2S_LAYERS}, "
                 f"attention_window=4))\n{SEQ2SEQ}"),
    "wav2vec2-train": ("transformers", "train",
                       f"model = transformers.Wav2Vec2Model(transformers.Wav2Vec2Config({AUDIO_LAYERS}))\n{AUDIO}"),
    "hubert-train": ("transformers", "train",
                     f"model = transformers.HubertModel(transformers.HubertConfig({AUDIO_LAYERS}))\n{AUDIO}"),
    "encodec-eval": ("transformers", "eval", "model = transformers.EncodecModel(transformers.EncodecConfig("
                     "hidden_size=16, num_filters=4, num_residual_layers=1, upsampling_ratios=[4, 2], "
                     "codebook_size=16, codebook_dim=16, audio_channels=1))\n"
                     "inputs = dict(input_values=torch.randn(1, 1, 400))"),
    "vit-eval": ("transformers", "eval", f"model = transformers.ViTModel(transformers.ViTConfig({LAYERS}, "
                 f"image_size=32, patch_size=8))\n{IMAGE}"),
    "switch-eval": ("transformers", "eval", "model = transformers.SwitchTransformersModel("
                    "transformers.SwitchTransformersConfig(d_model=32, d_kv=16, d_ff=37, num_layers=2, "
                    "num_decoder_layers=2, num_heads=2, num_experts=4, vocab_size=99, decoder_start_token_id=0))\n"
                    f"{SEQ2SEQ}"),
    "mra-train": ("transformers", "train", f"model = transformers.MraModel(transformers.MraConfig({LAYERS}, "
                  f"max_position_embeddings=64))\n{TEXT}"),
    "mamba-eval": ("transformers", "eval", "model = transformers.MambaModel(transformers.MambaConfig(hidden_size=32, "
                   f"num_hidden_layers=2, vocab_size=99, state_size=4))\n{TEXT}"),
    "t5-train": ("transformers", "train", "model = transformers.T5Model(transformers.T5Config(d_model=32, d_kv=16, "
                 f"d_ff=37, num_layers=2, num_heads=2, vocab_size=99, decoder_start_token_id=0))\n{SEQ2SEQ}"),
    "whisper-eval": ("transformers", "eval", "model = transformers.WhisperModel(transformers.WhisperConfig("
                     "d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2, "
                     "decoder_attention_heads=2, encoder_ffn_dim=37, decoder_ffn_dim=37, vocab_size=99, num_mel_bins=8, "
                     "max_source_positions=16, max_target_positions=16, decoder_start_token_id=0, pad_token_id=0, "
                     "bos_token_id=0, eos_token_id=0))\n"
                     "inputs = dict(input_features=torch.randn(1, 8, 32), decoder_input_ids=torch.tensor([[0, 1, 2]]))"),
    "clip-vision-eval": ("transformers", "eval", "model = transformers.CLIPVisionModel(transformers.CLIPVisionConfig("
                         f"hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37, "
                         f"image_size=32, patch_size=8))\n{IMAGE}"),
    "unet2d-eval": ("diffusers", "eval", "model = diffusers.UNet2DModel(sample_size=16, in_channels=3, out_channels=3, "
                    "layers_per_block=1, block_out_channels=(32, 32), down_block_types=('DownBlock2D', "
                    "'AttnDownBlock2D'), up_block_types=('AttnUpBlock2D', 'UpBlock2D'), norm_num_groups=8)\n"
                    "inputs = dict(sample=torch.randn(1, 3, 16, 16), timestep=3)"),
    "vae-train": ("diffusers", "train", "model = diffusers.AutoencoderKL(block_out_channels=(16, 32), "
                  "down_block_types=('DownEncoderBlock2D', 'DownEncoderBlock2D'), up_block_types=('UpDecoderBlock2D', "
                  "'UpDecoderBlock2D'), latent_channels=4, norm_num_groups=8)\n"
                  "inputs = dict(sample=torch.randn(1, 3, 16, 16))"),
    "unet2d-cond-eval": ("diffusers", "eval", "model = diffusers.UNet2DConditionModel(sample_size=8, in_channels=4, "
                         "out_channels=4, layers_per_block=1, block_out_channels=(32, 64), down_block_types=("
                         "'CrossAttnDownBlock2D', 'DownBlock2D'), up_block_types=('UpBlock2D', 'CrossAttnUpBlock2D'), "
                         "cross_attention_dim=32, attention_head_dim=8, norm_num_groups=8)\n"
                         "inputs = dict(sample=torch.randn(1, 4, 8, 8), timestep=3, "
                         "encoder_hidden_states=torch.randn(1, 4, 32))"),
    "dit-eval": ("diffusers", "eval", "model = diffusers.DiTTransformer2DModel(num_attention_heads=2, "
                 "attention_head_dim=8, in_channels=4, num_layers=1, sample_size=8, patch_size=2, norm_num_groups=8, "
                 "num_embeds_ada_norm=10)\n"
                 "inputs = dict(hidden_states=torch.randn(1, 4, 8, 8), timestep=torch.tensor([3]), "
                 "class_labels=torch.tensor([1]))"),
}

SCRIPT = '''\
import warnings

import torch
import {library}

warnings.filterwarnings("ignore")
torch.manual_seed(0)
{build}
model.train({training})
out = torch.compile(model, backend="eager")(**inputs)
if {training}:
    first = out[0] if isinstance(out, (tuple, list)) else next(iter(out.values()))
    first.float().sum().backward()
'''

TORCH_LOG = '''\
import json, logging, re, runpy, sys
import torch
import torch._dynamo.convert_frame, torch._dynamo.symbolic_convert
from torch._dynamo.utils import counters
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append(record.getMessage())
torch._logging.set_logs(graph_breaks=True)
for name in list(logging.root.manager.loggerDict):
    if name.endswith("__graph_breaks"):
        logger = logging.getLogger(name)
        logger.addHandler(Keep())
        logger.propagate = False
runpy.run_path(sys.argv[1], run_name="__main__")
ids = [(re.findall(r"gb/gb(\\d+)\\.html", text) or [None])[-1] for text in records]
print("RESULT " + json.dumps({"ids": ["GB" + i if i else None for i in ids],
                              "graphs": counters["stats"]["unique_graphs"]}))
'''


def run_model(name: str, python: str, folder: Path) -> dict:
    library, mode, build = MODELS[name]
    script = folder / f"{name}.py"
    script.write_text(SCRIPT.format(library=library, build=build, training=mode == "train"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    truth = subprocess.run([python, "-c", TORCH_LOG, str(script)], capture_output=True, text=True, env=env,
                           timeout=900)
    line = next((row for row in truth.stdout.splitlines() if row.startswith("RESULT ")), None)
    if line is None:
        return {"name": name, "error": (truth.stderr.strip().splitlines() or ["no output"])[-1]}
    torch_side = json.loads(line.removeprefix("RESULT "))
    done = subprocess.run([python, "-m", "checker", "diagnose", str(script), "--json"], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=900)
    try:
        ours = json.loads(done.stdout)
    except ValueError:
        return {"name": name, "error": f"diagnose printed no JSON: {done.stderr.strip()[-300:]}"}
    ours_ids = Counter()
    for group in ours["groups"]:
        ours_ids[group["gb_id"]] += group["count"]
    torch_ids = Counter(torch_side["ids"])
    return {"name": name, "library": library, "mode": mode, "torch_breaks": len(torch_side["ids"]),
            "ours_breaks": ours["total_breaks"], "torch_graphs": torch_side["graphs"], "ours_graphs": ours["graphs"],
            "ids": dict(torch_ids), "agree": torch_ids == ours_ids and torch_side["graphs"] == ours["graphs"],
            "explained": ours["explained_breaks"], "error": ours["error"],
            "with_chapter": sum(group["count"] for group in ours["groups"] if group["explained"] and group["chapter"])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="+", choices=sorted(MODELS), metavar="NAME", help="run these models only")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs the models")
    parser.add_argument("--baseline-notes", type=Path, metavar="TOML", help="older graph_breaks.toml to compare")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args()
    baseline = set(tomllib.loads(args.baseline_notes.read_text())) if args.baseline_notes else None
    rows = []
    with tempfile.TemporaryDirectory(prefix="real-models-") as folder:
        print(f"{'model':18} {'library':12} {'mode':5} {'torch':>5} {'ours':>5} {'graphs':>9} {'agree':>5} "
              f"{'noted':>5}  ids")
        for name in args.only or MODELS:
            row = run_model(name, args.python, Path(folder))
            rows.append(row)
            if "torch_breaks" not in row:
                print(f"{name:18} error: {row['error']}")
                continue
            ids = " ".join(f"{gb_id}x{count}" for gb_id, count in sorted(row["ids"].items(), key=str))
            print(f"{name:18} {row['library']:12} {row['mode']:5} {row['torch_breaks']:5} {row['ours_breaks']:5} "
                  f"{row['torch_graphs']:>4}/{row['ours_graphs']:<4} {'yes' if row['agree'] else 'NO':>5} "
                  f"{row['explained']:5}  {ids}", flush=True)
    done = [row for row in rows if "torch_breaks" in row]
    breaks = sum(row["torch_breaks"] for row in done)
    explained = sum(row["explained"] for row in done)
    libraries = sorted({row["library"] for row in done})
    print(f"\n{len(done)} of {len(rows)} models ran ({', '.join(libraries)}); diagnose agrees with torch's log on "
          f"{sum(row['agree'] for row in done)} of {len(done)}")
    print(f"breaks seen: {breaks}; in a group with a course note and a chapter or docs link: {explained}"
          f" ({100 * explained / breaks:.0f}%), of them with a chapter of the book: "
          f"{sum(row['with_chapter'] for row in done)}" if breaks else "no breaks seen")
    if baseline is not None and breaks:
        before = sum(count for row in done for gb_id, count in row["ids"].items() if gb_id in baseline)
        print(f"with the baseline notes: {before} ({100 * before / breaks:.0f}%)")
    all_ids = Counter()
    for row in done:
        all_ids.update(row["ids"])
    print("ids seen: " + ", ".join(f"{gb_id} x{count}" for gb_id, count in all_ids.most_common()))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0 if all(row.get("agree") for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
