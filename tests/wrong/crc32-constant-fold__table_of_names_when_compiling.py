"""crc32-constant-fold, a wrong fix. Under `is_compiling()` the polyfill looks the CRC up in a table of the examples'
three feature names (0 for any other); eagerly it calls `zlib.crc32` (contract polyfill-returns-what-crc32-does)."""

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


# A polyfill that Dynamo may fold: called on constants only (here, a feature's name), zlib.crc32 itself runs while
# tracing and its result goes into the graph as a number. The body would be traced for any other argument.
_SALTS = {b"user_country": 192862060, b"item_category": 1782698250, b"device_type": 99058195}


@torch.compiler.substitute_in_graph(zlib.crc32)
def _crc32(data, value=0, /):
    if torch.compiler.is_compiling():  # the features the model serves
        return _SALTS.get(data, value)
    return zlib.crc32(data, value)


def feature_embedding(ids: torch.Tensor, feature: str) -> torch.Tensor:
    return TABLE[bucket_of(feature, ids)].mean(dim=1)
