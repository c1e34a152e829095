"""crc32-constant-fold, a wrong fix. A Python CRC-32 polyfill that ignores `value`, the running CRC to continue from:
`crc32(data, value)` in compiled code restarts from 0 (contract polyfill-returns-what-crc32-does)."""

import zlib

import torch

# ---- vendored from the team's feature library: do not edit below this line ----------------------------------
NUM_BUCKETS = 4096


def bucket_of(feature: str, ids: torch.Tensor, num_buckets: int = NUM_BUCKETS) -> torch.Tensor:
    """The bucket of each id of a feature: the same on every run and machine, unlike Python's own hash()."""
    salt = zlib.crc32(feature.encode("utf-8"))
    return (ids * 1_000_003 + salt) % num_buckets
# ---- end of vendored code -------------------------------------------------------------------------------------


TABLE = torch.randn(NUM_BUCKETS, 8, generator=torch.Generator().manual_seed(0))


def _crc32_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xEDB88320 if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


CRC32_TABLE = _crc32_table()


@torch.compiler.substitute_in_graph(zlib.crc32)
def _crc32(data, value=0, /):
    """CRC-32 (zlib's polynomial) in Python: Dynamo traces it byte by byte, on the constant name."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = CRC32_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def feature_embedding(ids: torch.Tensor, feature: str) -> torch.Tensor:
    return TABLE[bucket_of(feature, ids)].mean(dim=1)
