"""crc32-constant-fold, a wrong fix. The feature name is lower-cased before it is hashed: the same for the draws'
snake_case names, but a name with capitals (`itemID`) lands in other buckets, and two names that differ in case
share theirs (contract polyfill-returns-what-crc32-does)."""

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
@torch.compiler.substitute_in_graph(zlib.crc32, can_constant_fold_through=True)
def _crc32(data, value=0, /):
    raise NotImplementedError("a CRC-32 of a value known only when the graph runs")


def feature_embedding(ids: torch.Tensor, feature: str) -> torch.Tensor:
    return TABLE[bucket_of(feature.lower(), ids)].mean(dim=1)  # feature names are snake_case
