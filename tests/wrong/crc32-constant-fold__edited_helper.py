"""crc32-constant-fold, "fixed" by editing the vendored helper to call a CRC-32 written in Python: the same buckets,
and it traces, but the task asks to leave `bucket_of` as it is (contract vendored-unchanged), and a
fix that leaves it so needs an escape hatch, which this file does not use (contract escape-hatch-used)."""

import torch


def _crc32(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xEDB88320 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


# ---- vendored from the team's feature library: do not edit below this line ----------------------------------
NUM_BUCKETS = 4096


def bucket_of(feature: str, ids: torch.Tensor, num_buckets: int = NUM_BUCKETS) -> torch.Tensor:
    """The bucket of each id of a feature: the same on every run and machine, unlike Python's own hash()."""
    salt = _crc32(feature.encode("utf-8"))
    return (ids * 1_000_003 + salt) % num_buckets
# ---- end of vendored code -------------------------------------------------------------------------------------


TABLE = torch.randn(NUM_BUCKETS, 8, generator=torch.Generator().manual_seed(0))


def feature_embedding(ids: torch.Tensor, feature: str) -> torch.Tensor:
    return TABLE[bucket_of(feature, ids)].mean(dim=1)
