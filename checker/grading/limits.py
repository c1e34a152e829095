"""What one sandboxed job may use: its own module, free of torch, so that a command that only asks a warm
grader (commands/warm.py) can say its limits without importing torch."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """What one job may use."""

    timeout: float = 60.0  # wall-clock seconds
    memory_mb: int = 4096  # address space the child may add beyond what it inherited from the grader
    output_bytes: int = 256 * 1024  # printed output kept for the report
