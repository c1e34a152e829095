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

Versions measured: torch 2.13.0 (CPU), transformers 5.18.0, diffusers 0.42.1; timm 1.0.31 and torchvision
0.28.0 with torch 2.13.0's CUDA build (run on CPU), since the registry's torchvision 0.28.0 is built
against that build's libraries (its operators do not load with the CPU wheel), while torch's Python
code, Dynamo's included, is the same in both wheels. `--python` runs the models in another interpreter
(a venv with other torch or library versions; it needs this project importable, which PYTHONPATH
provides). Such a venv, outside the project:
  python3.11 -m venv /tmp/models && env -u PIP_FIND_LINKS PIP_CONFIG_FILE=/dev/null /tmp/models/bin/pip install \
      torch==2.13.0 torchvision==0.28.0 timm==1.0.31 transformers==5.18.0 diffusers==0.42.1
  python benchmarks/real_models.py --python /tmp/models/bin/python
(this machine's pip configuration and PIP_FIND_LINKS would pick the CPU wheel: torch 2.13.0+cpu).

Measured so (2 December 2026, torch 2.13.0): diagnose agreed with torch's log on all 89 models (56 the
notes were written for, 33 held out). Of their 328 breaks, 304 (92.7%) were in a group
whose note had a chapter with the notes before the timm and torchvision work (GB0014 and GB4347 had a
docs section only, GB0213 no note), 328 (100%) with today's; the held-out models alone: 107 breaks, all
with a chapter (their ids: GB0036, GB0124, GB7000, GB0033, GB0170, GB4347, GB0206, GB0034).
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

# name: (library, mode, code that defines `model` and `inputs`: a dict of keyword arguments, or a tuple)
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

# timm (1.0.31) and torchvision (0.28.0): small configurations of each architecture, random weights.
TIMM_IMAGE = "inputs = dict(x=torch.randn(2, 3, {size}, {size}))"
DETECTION = "weights=None, weights_backbone=None, min_size=64, max_size=64"
DETECTION_EVAL = "inputs = dict(images=[torch.rand(3, 64, 64), torch.rand(3, 48, 64)])"
DETECTION_TRAIN = ("inputs = dict(images=[torch.rand(3, 64, 64)], targets=[dict(boxes=torch.tensor([[4.0, 6.0, 40.0, 50.0]]), "
                   "labels=torch.tensor([1]){masks})])")
VISION_IMAGE = "inputs = dict(x=torch.randn(2, 3, {size}, {size}))"


def _timm(name: str, mode: str, size: int, **options: object) -> tuple[str, str, str]:
    arguments = "".join(f", {key}={value!r}" for key, value in options.items())
    return ("timm", mode, f"model = timm.create_model({name!r}, pretrained=False{arguments})\n"
            + TIMM_IMAGE.format(size=size))


def _vision(builder: str, mode: str, inputs: str, arguments: str = "weights=None") -> tuple[str, str, str]:
    return ("torchvision", mode, f"model = torchvision.models.{builder}({arguments})\n{inputs}")


MODELS.update({
    "timm-resnet18-train": _timm("resnet18", "train", 32, num_classes=10),
    "timm-vit-train": _timm("vit_tiny_patch16_224", "train", 32, img_size=32, patch_size=8, depth=2,
                            drop_path_rate=0.1),
    "timm-sequencer-eval": _timm("sequencer2d_s", "eval", 64, layers=(1, 1, 1), patch_sizes=(7, 2, 1),
                                 embed_dims=(32, 32, 32), hidden_sizes=(16, 16, 16), mlp_ratios=(2, 2, 2)),
    "timm-swin-train": _timm("swin_tiny_patch4_window7_224", "train", 64, img_size=64, window_size=4, embed_dim=32,
                             depths=(1, 1), num_heads=(1, 2)),
    "timm-levit-eval": _timm("levit_128s", "eval", 64, img_size=64),
    "timm-convnext-train": _timm("convnext_atto", "train", 32, drop_path_rate=0.1),
    "timm-efficientnet-train": _timm("efficientnet_b0", "train", 32, drop_path_rate=0.1),
    "timm-beit-eval": _timm("beit_base_patch16_224", "eval", 32, img_size=32, patch_size=8, depth=2, embed_dim=32,
                            num_heads=2),
    "timm-coat-eval": _timm("coat_lite_tiny", "eval", 64, img_size=64),
    "timm-xcit-eval": _timm("xcit_nano_12_p16_224", "eval", 64, img_size=64, depth=2),
    "timm-pit-train": _timm("pit_ti_224", "train", 64, img_size=64, depth=(1, 1, 1)),
    "timm-tnt-eval": _timm("tnt_s_patch16_224", "eval", 32, img_size=32, depth=2),
    "timm-mobilevit-train": _timm("mobilevit_xxs", "train", 64),
    "timm-eva-eval": _timm("eva02_tiny_patch14_224", "eval", 56, img_size=56, depth=2),
    "timm-cait-train": _timm("cait_xxs24_224", "train", 32, img_size=32, depth=2, patch_size=8),
    "timm-deit-distilled-train": _timm("deit_tiny_distilled_patch16_224", "train", 32, img_size=32, patch_size=8,
                                       depth=2),
    "timm-hiera-eval": _timm("hiera_tiny_224", "eval", 64, img_size=64, stages=(1, 1, 1, 1)),
    "timm-swinv2-eval": _timm("swinv2_tiny_window8_256", "eval", 64, img_size=64, window_size=4,
                              depths=(1, 1, 1, 1)),
    # A transform compiled on its own, as a data pipeline on tensors might be.
    "timm-random-erasing": ("timm", "eval", "from timm.data.random_erasing import RandomErasing\n"
                            "model = RandomErasing(probability=1.0, device='cpu')\n"
                            "inputs = dict(input=torch.randn(2, 3, 32, 32))"),
    "timm-mixup": ("timm", "eval", "model = timm.data.Mixup(mixup_alpha=1.0, cutmix_alpha=1.0, num_classes=10)\n"
                   "inputs = dict(x=torch.randn(4, 3, 32, 32), target=torch.tensor([0, 1, 2, 3]))"),
    "tv-fasterrcnn-eval": _vision("detection.fasterrcnn_resnet50_fpn", "eval", DETECTION_EVAL, DETECTION),
    "tv-fasterrcnn-mobilenet-train": _vision("detection.fasterrcnn_mobilenet_v3_large_320_fpn", "train",
                                             DETECTION_TRAIN.format(masks=""), DETECTION),
    "tv-maskrcnn-eval": _vision("detection.maskrcnn_resnet50_fpn", "eval", DETECTION_EVAL, DETECTION),
    "tv-ssd300-eval": _vision("detection.ssd300_vgg16", "eval", DETECTION_EVAL, "weights=None, weights_backbone=None"),
    "tv-deeplabv3-train": _vision("segmentation.deeplabv3_mobilenet_v3_large", "train", VISION_IMAGE.format(size=64),
                                  "weights=None, weights_backbone=None, aux_loss=True"),
    "tv-swin-train": _vision("swin_t", "train", VISION_IMAGE.format(size=64)),
    "tv-maxvit-eval": _vision("maxvit_t", "eval", VISION_IMAGE.format(size=224).replace("(2,", "(1,")),
    "tv-googlenet-train": _vision("googlenet", "train", VISION_IMAGE.format(size=64),
                                  "weights=None, init_weights=True, aux_logits=True"),
    "tv-mobilenet-train": _vision("mobilenet_v3_small", "train", VISION_IMAGE.format(size=64)),
    "tv-efficientnet-train": _vision("efficientnet_b0", "train", VISION_IMAGE.format(size=64)),
    "tv-convnext-eval": _vision("convnext_tiny", "eval", VISION_IMAGE.format(size=64)),
    "tv-densenet-train": _vision("densenet121", "train", VISION_IMAGE.format(size=64)),
    "tv-vit-eval": _vision("VisionTransformer", "eval", VISION_IMAGE.format(size=32),
                           "image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64"),
    "tv-transforms-v2": ("torchvision", "eval", "import torchvision.transforms.v2 as T\n"
                         "model = T.Compose([T.RandomResizedCrop(24, antialias=True), T.RandomHorizontalFlip(), "
                         "T.ColorJitter(0.4, 0.4, 0.4), T.Normalize([0.5] * 3, [0.25] * 3)])\n"
                         "inputs = (torch.rand(3, 32, 32),)"),
})

# Models added after the course's notes were written for the ones above, and run once then without any
# change for them: the share of their breaks that lands in a group with a note and a chapter is the
# figure for models nobody tuned the notes for (`--held-out` runs only these).
HELD_OUT: dict[str, tuple[str, str, str]] = {
    "timm-fastvit-eval": _timm("fastvit_t8", "eval", 64),
    "timm-twins-train": _timm("twins_svt_small", "train", 64, img_size=64, depths=(1, 1, 1, 1)),
    "timm-pvt-eval": _timm("pvt_v2_b0", "eval", 64),
    "timm-edgenext-train": _timm("edgenext_xx_small", "train", 64),
    "timm-efficientvit-eval": _timm("efficientvit_b0", "eval", 64),
    "timm-botnet-eval": _timm("botnet26t_256", "eval", 64, img_size=64),
    "timm-mambaout-train": _timm("mambaout_femto", "train", 64, depths=(1, 1, 1, 1)),
    "timm-ghostnet-train": _timm("ghostnet_100", "train", 32),
    "timm-davit-eval": _timm("davit_tiny", "eval", 64, depths=(1, 1, 1, 1)),
    "timm-repvit-eval": _timm("repvit_m0_9", "eval", 64),
    "tv-retinanet-eval": _vision("detection.retinanet_resnet50_fpn", "eval", DETECTION_EVAL, DETECTION),
    "tv-fcos-train": _vision("detection.fcos_resnet50_fpn", "train", DETECTION_TRAIN.format(masks=""), DETECTION),
    "tv-ssdlite-eval": _vision("detection.ssdlite320_mobilenet_v3_large", "eval", DETECTION_EVAL,
                               "weights=None, weights_backbone=None"),
    "tv-keypointrcnn-eval": _vision("detection.keypointrcnn_resnet50_fpn", "eval", DETECTION_EVAL, DETECTION),
    "tv-lraspp-train": _vision("segmentation.lraspp_mobilenet_v3_large", "train",
                               "inputs = dict(input=torch.randn(2, 3, 64, 64))", "weights=None, weights_backbone=None"),
    "tv-r3d-train": _vision("video.r3d_18", "train", "inputs = dict(x=torch.randn(2, 3, 4, 32, 32))"),
    "tv-shufflenet-train": _vision("shufflenet_v2_x0_5", "train", VISION_IMAGE.format(size=64)),
    "tv-quantizable-resnet-eval": _vision("quantization.resnet18", "eval", VISION_IMAGE.format(size=64),
                                          "weights=None, quantize=False"),
    "tv-mixup-cutmix": ("torchvision", "eval", "import torchvision.transforms.v2 as T\n"
                        "model = T.RandomChoice([T.MixUp(num_classes=10), T.CutMix(num_classes=10)])\n"
                        "inputs = (torch.rand(4, 3, 32, 32), torch.tensor([0, 1, 2, 3]))"),
    "tv-autoaugment": ("torchvision", "eval", "import torchvision.transforms.v2 as T\n"
                       "model = T.Compose([T.RandAugment(), T.RandomErasing(p=1.0)])\n"
                       "inputs = (torch.randint(0, 256, (3, 32, 32), dtype=torch.uint8),)"),
    "bigbird-eval": ("transformers", "eval", "model = transformers.BigBirdModel(transformers.BigBirdConfig("
                     f"{LAYERS}, attention_type='block_sparse', block_size=2, num_random_blocks=2, "
                     "max_position_embeddings=64))\ninputs = dict(input_ids=torch.randint(1, 99, (2, 32)))"),
    "distilbert-train": ("transformers", "train", "model = transformers.DistilBertModel(transformers.DistilBertConfig("
                         f"dim=32, n_layers=2, n_heads=2, hidden_dim=37, vocab_size=99))\n{TEXT}"),
    "deberta-v2-eval": ("transformers", "eval",
                        f"model = transformers.DebertaV2Model(transformers.DebertaV2Config({LAYERS}))\n{TEXT}"),
    "xlnet-train": ("transformers", "train", "model = transformers.XLNetModel(transformers.XLNetConfig(d_model=32, "
                    f"n_layer=2, n_head=2, d_inner=37, vocab_size=99))\n{TEXT}"),
    "gptneo-eval": ("transformers", "eval", "model = transformers.GPTNeoModel(transformers.GPTNeoConfig(hidden_size=32, "
                    "num_layers=2, num_heads=2, vocab_size=99, attention_types=[[['global', 'local'], 1]], "
                    f"window_size=4, max_position_embeddings=64, bos_token_id=0, eos_token_id=0))\n{TEXT}"),
    "bloom-train": ("transformers", "train", "model = transformers.BloomModel(transformers.BloomConfig(hidden_size=32, "
                    f"n_layer=2, n_head=2, vocab_size=99))\n{TEXT}"),
    "sew-train": ("transformers", "train", f"model = transformers.SEWModel(transformers.SEWConfig({AUDIO_LAYERS}, "
                  f"squeeze_factor=2))\n{AUDIO}"),
    "segformer-eval": ("transformers", "eval", "model = transformers.SegformerModel(transformers.SegformerConfig("
                       "num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32], "
                       "num_attention_heads=[1, 2], mlp_ratios=[2, 2], patch_sizes=[7, 3], strides=[4, 2]))\n"
                       f"{IMAGE}"),
    "funnel-train": ("transformers", "train", "model = transformers.FunnelModel(transformers.FunnelConfig(d_model=32, "
                     f"n_head=2, d_head=16, d_inner=37, block_sizes=[1, 1], vocab_size=99))\n{TEXT}"),
    "qwen2-eval": ("transformers", "eval", "model = transformers.Qwen2Model(transformers.Qwen2Config("
                   f"{LAYERS}, num_key_value_heads=1, max_position_embeddings=64))\n{TEXT}"),
    "falcon-train": ("transformers", "train", "model = transformers.FalconModel(transformers.FalconConfig("
                     f"hidden_size=32, num_hidden_layers=2, num_attention_heads=2, vocab_size=99))\n{TEXT}"),
    "pegasus-train": ("transformers", "train", f"model = transformers.PegasusModel(transformers.PegasusConfig("
                      f"{S2S_LAYERS}))\n{SEQ2SEQ}"),
    "reformer-eval": ("transformers", "eval", "model = transformers.ReformerModel(transformers.ReformerConfig("
                      "hidden_size=32, num_attention_heads=2, attention_head_size=16, feed_forward_size=37, "
                      "vocab_size=99, attn_layers=['local', 'lsh'], axial_pos_shape=[4, 4], axial_pos_embds_dim=[16, 16], "
                      f"local_attn_chunk_length=4, lsh_attn_chunk_length=4, num_buckets=2))\n{TEXT}"),
}
MODELS.update(HELD_OUT)

SCRIPT = '''\
import warnings

import torch
import {library}

warnings.filterwarnings("ignore")
torch.manual_seed(0)
{build}
if isinstance(model, torch.nn.Module):
    model.train({training})
compiled = torch.compile(model, backend="eager")
out = compiled(*inputs) if isinstance(inputs, tuple) else compiled(**inputs)  # inputs: positional or keyword
if {training}:
    first = out[0] if isinstance(out, (tuple, list)) else next(iter(out.values())) if isinstance(out, dict) else out
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
    parser.add_argument("--held-out", action="store_true", help="run only the models the notes were not tuned for")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs the models")
    parser.add_argument("--baseline-notes", type=Path, metavar="TOML", help="older graph_breaks.toml to compare")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args()
    baseline = set(tomllib.loads(args.baseline_notes.read_text())) if args.baseline_notes else None
    rows = []
    with tempfile.TemporaryDirectory(prefix="real-models-") as folder:
        print(f"{'model':18} {'library':12} {'mode':5} {'torch':>5} {'ours':>5} {'graphs':>9} {'agree':>5} "
              f"{'noted':>5}  ids")
        for name in args.only or (HELD_OUT if args.held_out else MODELS):
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
