"""Exercise: hashed feature embeddings, salted with a stable hash of the feature's name.

A recommender looks up the ids of each categorical feature (a user's country, an item's category, ...) in one
shared table of hashed buckets. `feature_embedding(ids, feature)` salts the ids with a hash of the feature's name,
so that the same id of two features lands in different buckets, and averages the embeddings of a bag of ids. The
hash is `bucket_of`'s, vendored from the team's feature library, which they do not edit: it hashes the name with
`zlib.crc32`, a function written in C, which Dynamo cannot trace (GB0007, "Attempted to call function marked as
skipped"). Make `feature_embedding` compile as one graph with `fullgraph=True`, with the same results as now,
without changing the vendored code.
Check your fix with:  gbcheck check crc32-constant-fold
"""

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
    return TABLE[bucket_of(feature, ids)].mean(dim=1)
