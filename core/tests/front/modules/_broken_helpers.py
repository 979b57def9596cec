# A helper whose function fails at compile time when it is called.
import tilelang.language as T


def block_count(n):
    return n // undefined_tile_size
