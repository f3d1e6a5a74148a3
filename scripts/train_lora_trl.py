#!/usr/bin/env python3
"""Train a LoRA adapter for one Flowlab role on a `flowlab export` file, with Hugging Face TRL + PEFT.

  SFT (the role's turns from rollouts that beat their group):
    python scripts/train_lora_trl.py --data export/solver.sft.jsonl --model Qwen/Qwen2.5-0.5B-Instruct --out lora-solver
  KTO (every turn, label = advantage > 0; turns with zero advantage carry no signal and are dropped):
    python scripts/train_lora_trl.py --data export/solver.grpo.jsonl --model Qwen/Qwen2.5-0.5B-Instruct --out lora-solver-kto

The method follows the file name (`*.sft.jsonl`: SFT, `*.grpo.jsonl`: KTO) unless --method says otherwise.
Conversational SFT records (`messages`) train on the assistant turn only: with
`assistant_only_loss=True` when the tokenizer's chat template marks assistant turns with
`{% generation %}`, else (most templates) through TRL's prompt-completion format, whose
completion-only loss trains on the same turn; --completion-only asks for the latter directly.
Standard records (`prompt`/`completion` strings, `flowlab export --format standard`) train on the
completion only.

The output folder holds a PEFT adapter (adapter_config.json, adapter_model.safetensors) for
llama.cpp's convert_lora_to_gguf.py. --dry-run checks the data and prints the plan as JSON
without importing any ML library (no GPU needed). See docs/training.md.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Train a LoRA adapter on a Flowlab TRL export (SFT or KTO).")
    p.add_argument("--data", type=Path, required=True, help="<role>.sft.jsonl or <role>.grpo.jsonl from `flowlab export`")
    p.add_argument("--model", required=True, help="Hugging Face model id or local folder: the same weights as your GGUF base")
    p.add_argument("--out", type=Path, required=True, help="output folder for the PEFT adapter")
    p.add_argument("--method", choices=["sft", "kto"], help="default: sft for *.sft.jsonl, kto for *.grpo.jsonl")
    p.add_argument("--rank", type=int, default=16, help="LoRA rank r (default 16)")
    p.add_argument("--alpha", type=float, default=32, help="LoRA alpha (default 32; the update is scaled by alpha / r)")
    p.add_argument("--dropout", type=float, default=0.05, help="LoRA dropout (default 0.05)")
    p.add_argument("--target-modules", default="all-linear", help='PEFT target modules (default "all-linear"; or e.g. "q_proj,v_proj")')
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--lr", type=float, help="learning rate (default 1e-4 for SFT, 5e-6 for KTO)")
    p.add_argument("--batch-size", type=int, default=4, help="per-device batch size (KTO needs > 1)")
    p.add_argument("--grad-accum", type=int, default=4)
    p.add_argument("--max-length", type=int, default=2048, help="tokens per example")
    p.add_argument("--beta", type=float, default=0.1, help="KTO beta (default 0.1)")
    p.add_argument("--completion-only", action="store_true", help="conversational SFT through prompt/completion, never assistant_only_loss")
    p.add_argument("--dry-run", action="store_true", help="check the data, print the plan, train nothing")
    args = p.parse_args(argv)
    if args.method is None:
        name = args.data.name
        if name.endswith(".sft.jsonl"):
            args.method = "sft"
        elif name.endswith(".grpo.jsonl"):
            args.method = "kto"
        else:
            p.error(f"--method sft|kto is needed: cannot tell from the file name {name}")
    return args


def fail(message: str) -> None:
    print(f"train_lora_trl.py: {message}", file=sys.stderr)
    sys.exit(1)


def is_messages(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str) for m in value
    )


def load_rows(args: argparse.Namespace) -> tuple[list[dict], str]:
    """Reads the export and returns the training rows (only the columns the trainer uses) and their format."""
    if not args.data.is_file():
        fail(f"{args.data}: no such file (run `flowlab export <experiment> --out <dir>` first)")
    rows: list[dict] = []
    with args.data.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                fail(f"{args.data}:{n}: not JSON ({e})")
    if not rows:
        fail(f"{args.data}: no records (no rollout beat its group: run more tasks or a larger --group)")

    if args.method == "sft":
        if all(is_messages(r.get("messages")) for r in rows):
            for n, r in enumerate(rows, 1):
                if r["messages"][-1]["role"] != "assistant":
                    fail(f"{args.data}: record {n} does not end with an assistant turn")
            if args.completion_only:
                return [{"prompt": r["messages"][:-1], "completion": r["messages"][-1:]} for r in rows], "conversational"
            return [{"messages": r["messages"]} for r in rows], "conversational"
        if all(isinstance(r.get("prompt"), str) and isinstance(r.get("completion"), str) for r in rows):
            return [{"prompt": r["prompt"], "completion": r["completion"]} for r in rows], "standard"
        fail(f"{args.data}: expected SFT records with `messages`, or `prompt` and `completion` strings")

    # KTO: unpaired preference records; the export's `label` is advantage > 0.
    for n, r in enumerate(rows, 1):
        if "prompt" not in r or "completion" not in r or not isinstance(r.get("label"), bool):
            fail(f"{args.data}: record {n} lacks prompt, completion or a boolean label (use a *.grpo.jsonl export)")
    kept = [r for r in rows if r.get("advantage", 1) != 0]
    fmt = "conversational" if kept and is_messages(kept[0]["prompt"]) else "standard"
    out = [{"prompt": r["prompt"], "completion": r["completion"], "label": r["label"]} for r in kept]
    if not any(r["label"] for r in out) or all(r["label"] for r in out):
        fail(f"{args.data}: KTO needs both desirable (label true) and undesirable turns with a non-zero advantage; got {sum(r['label'] for r in out)} true of {len(out)}")
    return out, fmt


def train(args: argparse.Namespace, rows: list[dict], fmt: str) -> None:
    # Imported here so --dry-run and --help need no ML libraries.
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoTokenizer

    targets = args.target_modules if args.target_modules == "all-linear" else [m.strip() for m in args.target_modules.split(",")]
    peft_config = LoraConfig(r=args.rank, lora_alpha=args.alpha, lora_dropout=args.dropout, target_modules=targets, task_type="CAUSAL_LM")
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    template = tokenizer.chat_template if isinstance(tokenizer.chat_template, str) else ""
    if "messages" in rows[0] and not re.search(r"\{%-?\s*generation\s*-?%\}", template):
        print("note: the chat template has no {% generation %} markers, so assistant_only_loss cannot mask the "
              "prompt; training on the same assistant turn through the prompt-completion format instead", file=sys.stderr)
        rows = [{"prompt": r["messages"][:-1], "completion": r["messages"][-1:]} for r in rows]
    dataset = Dataset.from_list(rows)
    common = dict(
        output_dir=str(args.out),
        num_train_epochs=args.epochs,
        per_device_train_batch_size=args.batch_size,
        gradient_accumulation_steps=args.grad_accum,
        max_length=args.max_length,
        logging_steps=10,
        save_strategy="no",
        report_to="none",
    )
    if args.method == "sft":
        from trl import SFTConfig, SFTTrainer

        config = SFTConfig(**common, learning_rate=args.lr or 1e-4, assistant_only_loss="messages" in rows[0])
        trainer = SFTTrainer(model=args.model, args=config, train_dataset=dataset, processing_class=tokenizer, peft_config=peft_config)
    else:
        try:
            from trl import KTOConfig, KTOTrainer
        except ImportError:  # TRL releases that keep KTO under trl.experimental
            from trl.experimental.kto import KTOConfig, KTOTrainer

        config = KTOConfig(**common, learning_rate=args.lr or 5e-6, beta=args.beta)
        trainer = KTOTrainer(model=args.model, args=config, train_dataset=dataset, processing_class=tokenizer, peft_config=peft_config)
    trainer.train()
    trainer.save_model(str(args.out))  # adapter_config.json + adapter_model.safetensors


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    rows, fmt = load_rows(args)
    plan = {
        "method": args.method,
        "format": fmt,
        "records": len(rows),
        # what the loss covers: the role's own (assistant) turn, or for standard records the completion
        "loss": "kto" if args.method == "kto" else "assistant-turn" if fmt == "conversational" else "completion",
        "model": args.model,
        "out": str(args.out),
        "lora": {"r": args.rank, "alpha": args.alpha, "target_modules": args.target_modules},
    }
    if args.method == "kto":
        plan["desirable"] = sum(1 for r in rows if r["label"])
        plan["undesirable"] = len(rows) - plan["desirable"]
    print(json.dumps(plan))
    if args.dry_run:
        return
    train(args, rows, fmt)


if __name__ == "__main__":
    main()
