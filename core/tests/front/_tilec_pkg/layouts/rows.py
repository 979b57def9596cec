# Found by walking up from `modules/`: `_tilec_pkg.layouts.rows` names
# this file from the folder above it.

ROW_TILE = 16


def padded(n):
    return (n + ROW_TILE - 1) // ROW_TILE * ROW_TILE
